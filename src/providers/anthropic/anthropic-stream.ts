import type { ContentBlock, FinishReason, LlmFailure, StreamChunk, TokenUsage } from '../../llm/index.ts';
import { LlmError } from '../../llm/index.ts';
import type { ServerSentEvent } from '../http/index.ts';
import { failureFromStreamError, malformedStream, parseStreamEventJson } from '../http/index.ts';

interface OpenBlock {
  index: number;
  kind: 'text' | 'thinking' | 'redacted_thinking' | 'tool_use';
  text: string;
  signature: string | undefined;
  data: string;
  id: string;
  name: string;
  closed: boolean;
}

interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

type WireEvent = {
  type?: unknown;
  index?: unknown;
  message?: { usage?: WireUsage };
  content_block?: {
    type?: unknown;
    text?: unknown;
    thinking?: unknown;
    signature?: unknown;
    data?: unknown;
    id?: unknown;
    name?: unknown;
  };
  delta?: {
    type?: unknown;
    text?: unknown;
    thinking?: unknown;
    signature?: unknown;
    partial_json?: unknown;
    stop_reason?: unknown;
    stop_details?: unknown;
  };
  usage?: WireUsage;
  error?: unknown;
};

/**
 * Translates Messages API stream events (in batches, as `streamServerSentEventBatches` reads them) into the stream vocabulary: text, thinking (with its signature)
 * and redacted thinking as reasoning blocks, tool_use as tool calls with the raw streamed JSON, usage with
 * cache reads and writes, and `stop_reason` as the finish. An `error` event or a malformed one becomes a
 * typed LlmError; a stream that ends before `message_stop` is a `TRANSPORT` failure.
 */
export async function* translateMessagesStream(
  batches: AsyncIterable<readonly ServerSentEvent[]>,
  provider: string,
): AsyncGenerator<StreamChunk, void, undefined> {
  const blocks = new Map<number, OpenBlock>();
  const usage: { input: number; output: number; cacheRead: number; cacheWrite: number } = {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
  };
  let sawUsage = false;
  let stopReason: string | undefined;
  let stopDetails: Record<string, unknown> | undefined;
  let started = false;

  const applyUsage = (wire: WireUsage | undefined): void => {
    if (wire === undefined || wire === null) return;
    sawUsage = true;
    if (typeof wire.input_tokens === 'number') usage.input = wire.input_tokens;
    if (typeof wire.output_tokens === 'number') usage.output = wire.output_tokens;
    if (typeof wire.cache_read_input_tokens === 'number') usage.cacheRead = wire.cache_read_input_tokens;
    if (typeof wire.cache_creation_input_tokens === 'number')
      usage.cacheWrite = wire.cache_creation_input_tokens;
  };

  for await (const batch of batches) {
    for (const event of batch) {
      const payload = parseStreamEventJson<WireEvent>(event.data, provider);
      const type = typeof payload.type === 'string' ? payload.type : event.event;
      switch (type) {
        case 'ping':
          break;
        case 'error':
          throw new LlmError(failureFromStreamError(provider, payload));
        case 'message_start':
          started = true;
          applyUsage(payload.message?.usage);
          break;
        case 'content_block_start': {
          const index = indexOf(payload, provider);
          const start = payload.content_block ?? {};
          const kind = start.type;
          if (kind !== 'text' && kind !== 'thinking' && kind !== 'redacted_thinking' && kind !== 'tool_use') {
            // Server-side tool blocks and future block types are not part of the model-visible reply.
            break;
          }
          const block: OpenBlock = {
            index,
            kind,
            text:
              typeof start.text === 'string'
                ? start.text
                : typeof start.thinking === 'string'
                  ? start.thinking
                  : '',
            signature:
              typeof start.signature === 'string' && start.signature !== '' ? start.signature : undefined,
            data: typeof start.data === 'string' ? start.data : '',
            id: typeof start.id === 'string' ? start.id : '',
            name: typeof start.name === 'string' ? start.name : '',
            closed: false,
          };
          blocks.set(index, block);
          yield {
            type: 'block-start',
            index,
            blockType: kind === 'tool_use' ? 'tool-call' : kind === 'text' ? 'text' : 'reasoning',
          };
          if (block.kind === 'tool_use') {
            yield { type: 'tool-call-delta', index, id: block.id, name: block.name, argumentsDelta: '' };
          } else if (block.text !== '') {
            yield block.kind === 'text'
              ? { type: 'text-delta', index, text: block.text }
              : { type: 'reasoning-delta', index, text: block.text };
          }
          break;
        }
        case 'content_block_delta': {
          const block = blocks.get(indexOf(payload, provider));
          const delta = payload.delta ?? {};
          if (block === undefined || block.closed) break;
          if (delta.type === 'text_delta' && typeof delta.text === 'string') {
            block.text += delta.text;
            yield { type: 'text-delta', index: block.index, text: delta.text };
          } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
            block.text += delta.thinking;
            yield { type: 'reasoning-delta', index: block.index, text: delta.thinking };
          } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
            block.signature = (block.signature ?? '') + delta.signature;
          } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
            block.text += delta.partial_json;
            yield {
              type: 'tool-call-delta',
              index: block.index,
              id: block.id,
              name: block.name,
              argumentsDelta: delta.partial_json,
            };
          }
          break;
        }
        case 'content_block_stop': {
          const block = blocks.get(indexOf(payload, provider));
          if (block === undefined || block.closed) break;
          block.closed = true;
          yield { type: 'block-end', index: block.index, block: finalBlock(block) };
          break;
        }
        case 'message_delta':
          if (typeof payload.delta?.stop_reason === 'string') stopReason = payload.delta.stop_reason;
          if (isRecord(payload.delta?.stop_details)) stopDetails = payload.delta.stop_details;
          applyUsage(payload.usage);
          break;
        case 'message_stop': {
          for (const block of blocks.values()) {
            if (block.closed) continue;
            block.closed = true;
            yield { type: 'block-end', index: block.index, block: finalBlock(block) };
          }
          if (sawUsage) yield { type: 'usage', usage: toUsage(usage) };
          yield { type: 'finish', reason: finishOf(stopReason, stopDetails, [...blocks.values()], provider) };
          return;
        }
        default:
          if (!started) throw malformedStream(provider, `unexpected first event '${String(type)}'`);
          // Event types added by the vendor later are ignored, as its versioning policy asks of clients.
          break;
      }
    }
  }
  throw new LlmError({
    code: 'TRANSPORT',
    message: `${provider}: the stream ended before the response finished`,
  });
}

function toUsage(usage: {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}): TokenUsage {
  const result: TokenUsage = { inputTokens: usage.input, outputTokens: usage.output };
  if (usage.cacheRead > 0) result.cacheReadTokens = usage.cacheRead;
  if (usage.cacheWrite > 0) result.cacheWriteTokens = usage.cacheWrite;
  return result;
}

function finalBlock(block: OpenBlock): ContentBlock {
  switch (block.kind) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking':
      return block.signature !== undefined
        ? { type: 'reasoning', text: block.text, signature: block.signature }
        : { type: 'reasoning', text: block.text };
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', redacted: block.data };
    case 'tool_use':
      return {
        type: 'tool-call',
        id: block.id !== '' ? block.id : `call-${block.index}`,
        name: block.name,
        arguments: block.text === '' ? '{}' : block.text,
      };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finishOf(
  reason: string | undefined,
  details: Record<string, unknown> | undefined,
  blocks: readonly OpenBlock[],
  provider: string,
): FinishReason {
  switch (reason) {
    case 'max_tokens':
      return { kind: 'max-tokens' };
    case 'tool_use':
      return { kind: 'tool-calls' };
    case 'refusal': {
      const explanation = typeof details?.explanation === 'string' ? `: ${details.explanation}` : '';
      const failure: LlmFailure = {
        code: 'CONTENT_FILTER',
        message: `${provider}: the model refused to answer${explanation}`,
      };
      if (details !== undefined) failure.details = details;
      return { kind: 'error', failure };
    }
    case 'model_context_window_exceeded':
      return {
        kind: 'error',
        failure: {
          code: 'CONTEXT_WINDOW_EXCEEDED',
          message: `${provider}: the response filled the context window`,
        },
      };
    default: {
      if (blocks.some((block) => block.kind === 'tool_use')) return { kind: 'tool-calls' };
      const empty = !blocks.some(
        (block) =>
          block.kind === 'redacted_thinking' || (block.kind !== 'tool_use' && block.text.trim() !== ''),
      );
      if (empty) {
        return {
          kind: 'error',
          failure: { code: 'EMPTY_RESPONSE', message: `${provider}: the model returned an empty response` },
        };
      }
      return { kind: 'stop' };
    }
  }
}

function indexOf(payload: WireEvent, provider: string): number {
  const index = payload.index;
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) {
    throw malformedStream(provider, 'a content block event has no valid index');
  }
  return index;
}
