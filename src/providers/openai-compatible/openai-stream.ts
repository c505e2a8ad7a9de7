import type { ContentBlock, FinishReason, LlmFailure, StreamChunk, TokenUsage } from '../../llm/index.ts';
import { LlmError } from '../../llm/index.ts';
import type { ServerSentEvent } from '../http/index.ts';
import { failureFromStreamError, malformedStream, parseStreamEventJson } from '../http/index.ts';

interface OpenBlock {
  index: number;
  kind: 'text' | 'reasoning' | 'tool-call';
  text: string;
  id: string;
  name: string;
}

interface WireToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string } | null;
}

interface WireDelta {
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: WireToolCallDelta[] | null;
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  prompt_cache_hit_tokens?: number;
  prompt_cache_miss_tokens?: number;
}

/** Maps a Chat Completions usage object (OpenAI cached tokens, DeepSeek cache hit/miss) to disjoint counts. */
export function toTokenUsage(usage: WireUsage): TokenUsage {
  const prompt = count(usage.prompt_tokens);
  const completion = count(usage.completion_tokens);
  const reasoning = count(usage.completion_tokens_details?.reasoning_tokens);
  // Most servers count reasoning inside completion_tokens; some (xAI) report it beside them, which the
  // total shows: then the billed output is completion + reasoning.
  const total = count(usage.total_tokens);
  const beside = reasoning > 0 && total > 0 && total === prompt + completion + reasoning;
  const output = beside ? completion + reasoning : completion;
  const hit = usage.prompt_cache_hit_tokens;
  const cached = typeof hit === 'number' ? count(hit) : count(usage.prompt_tokens_details?.cached_tokens);
  const miss = usage.prompt_cache_miss_tokens;
  const result: TokenUsage = {
    inputTokens: typeof miss === 'number' ? count(miss) : Math.max(0, prompt - cached),
    outputTokens: output,
  };
  if (cached > 0) result.cacheReadTokens = cached;
  if (reasoning > 0) result.reasoningTokens = reasoning;
  return result;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/**
 * Translates Chat Completions stream events (in batches, as `streamServerSentEventBatches` reads them)
 * into the stream vocabulary: text and `reasoning_content` blocks, tool-call deltas assembled per call
 * index with raw string arguments, usage, and a finish mapped from `finish_reason`. A malformed event, a
 * mid-stream error object, or a stream that ends without a finish becomes a typed LlmError.
 */
export async function* translateChatCompletionsStream(
  batches: AsyncIterable<readonly ServerSentEvent[]>,
  provider: string,
): AsyncGenerator<StreamChunk, void, undefined> {
  const blocks: OpenBlock[] = [];
  const toolBlocks = new Map<number, OpenBlock>();
  let current: OpenBlock | undefined;
  let nextIndex = 0;
  let finishReason: string | undefined;
  let usage: TokenUsage | undefined;
  let done = false;

  const open = (kind: OpenBlock['kind']): { block: OpenBlock; chunk: StreamChunk } => {
    const block: OpenBlock = { index: nextIndex++, kind, text: '', id: '', name: '' };
    blocks.push(block);
    return { block, chunk: { type: 'block-start', index: block.index, blockType: kind } };
  };

  reading: for await (const batch of batches) {
    for (const event of batch) {
      if (event.data === '[DONE]' || event.data.trim() === '[DONE]') {
        done = true;
        break reading;
      }
      const payload = parseStreamEventJson<WireChunk>(event.data, provider);
      if (payload.error !== undefined && payload.error !== null) {
        throw new LlmError(failureFromStreamError(provider, payload));
      }
      if (payload.usage !== undefined && payload.usage !== null) usage = toTokenUsage(payload.usage);
      const choices = payload.choices;
      if (choices === undefined || choices === null) {
        if (payload.usage === undefined)
          throw malformedStream(provider, 'an event has neither choices nor usage');
        continue;
      }
      if (!Array.isArray(choices)) throw malformedStream(provider, '`choices` is not an array');
      if (choices.length === 0) continue;
      const choice = choices[0] as { delta?: WireDelta | null; finish_reason?: string | null } | null;
      if (!isObject(choice)) throw malformedStream(provider, 'a choice is not an object');
      const delta = choice.delta ?? {};
      if (!isObject(delta)) throw malformedStream(provider, '`delta` is not an object');
      const toolCalls = delta.tool_calls;
      if (toolCalls !== undefined && toolCalls !== null && !Array.isArray(toolCalls))
        throw malformedStream(provider, '`tool_calls` is not an array');
      // Reasoning first, then text: an event carrying both continues the reasoning block, then opens
      // (or continues) the text block. Two passes rather than a list of pairs, which every event built.
      for (let pass = 0; pass < 2; pass++) {
        const kind = pass === 0 ? 'reasoning' : 'text';
        const text = pass === 0 ? delta.reasoning_content : delta.content;
        if (typeof text !== 'string' || text === '') continue;
        if (current?.kind !== kind) {
          const opened = open(kind);
          current = opened.block;
          yield opened.chunk;
        }
        current.text += text;
        yield kind === 'text'
          ? { type: 'text-delta', index: current.index, text }
          : { type: 'reasoning-delta', index: current.index, text };
      }
      if (toolCalls !== undefined && toolCalls !== null) {
        for (const call of toolCalls as unknown[]) {
          if (
            !isObject(call) ||
            (call.function !== undefined && call.function !== null && !isObject(call.function))
          ) {
            throw malformedStream(provider, 'a tool call delta is not an object');
          }
          const position = typeof call.index === 'number' ? call.index : toolBlocks.size;
          let block = toolBlocks.get(position);
          if (block === undefined) {
            const opened = open('tool-call');
            block = opened.block;
            toolBlocks.set(position, block);
            yield opened.chunk;
          }
          current = block;
          if (typeof call.id === 'string' && call.id !== '' && block.id === '') block.id = call.id;
          const name = call.function?.name;
          if (typeof name === 'string' && name !== '' && block.name === '') block.name = name;
          const fragment: unknown = call.function?.arguments;
          // A few servers send the arguments as an object rather than JSON text.
          const argumentsDelta =
            typeof fragment === 'string' ? fragment : isObject(fragment) ? JSON.stringify(fragment) : '';
          block.text += argumentsDelta;
          const chunk: StreamChunk = {
            type: 'tool-call-delta',
            index: block.index,
            id: block.id,
            argumentsDelta,
          };
          if (block.name !== '') chunk.name = block.name;
          yield chunk;
        }
      }
      if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '')
        finishReason = choice.finish_reason;
    }
  }

  if (!done && finishReason === undefined) {
    throw new LlmError({
      code: 'TRANSPORT',
      message: `${provider}: the stream ended before the response finished`,
    });
  }
  for (const block of blocks) yield { type: 'block-end', index: block.index, block: finalBlock(block) };
  if (usage !== undefined) yield { type: 'usage', usage };
  yield { type: 'finish', reason: finishOf(finishReason, blocks, provider) };
}

function isObject(value: unknown): value is Record<string, unknown> & WireToolCallDelta & WireDelta {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finalBlock(block: OpenBlock): ContentBlock {
  switch (block.kind) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'reasoning':
      return { type: 'reasoning', text: block.text };
    case 'tool-call':
      return {
        type: 'tool-call',
        id: block.id !== '' ? block.id : `call-${block.index}`,
        name: block.name,
        arguments: block.text,
      };
  }
}

function finishOf(reason: string | undefined, blocks: readonly OpenBlock[], provider: string): FinishReason {
  const hasCalls = blocks.some((block) => block.kind === 'tool-call');
  switch (reason) {
    case 'length':
      return { kind: 'max-tokens' };
    case 'tool_calls':
    case 'function_call':
      return { kind: 'tool-calls' };
    case 'content_filter':
      return error({
        code: 'CONTENT_FILTER',
        message: `${provider}: the response was blocked by a content filter`,
      });
    case 'insufficient_system_resource':
      return error({ code: 'SERVER', message: `${provider}: the provider ran out of capacity mid-response` });
    default: {
      // Some servers (Ollama, older vLLM) say `stop` even when they called tools.
      if (hasCalls) return { kind: 'tool-calls' };
      const empty = !blocks.some((block) => block.text.trim() !== '' && block.kind === 'text');
      if (empty && !blocks.some((block) => block.kind === 'reasoning' && block.text.trim() !== '')) {
        return error({
          code: 'EMPTY_RESPONSE',
          message: `${provider}: the model returned an empty response`,
        });
      }
      return { kind: 'stop' };
    }
  }
}

function error(failure: LlmFailure): FinishReason {
  return { kind: 'error', failure };
}

interface WireChunk {
  choices?: unknown;
  usage?: WireUsage | null;
  error?: unknown;
}
