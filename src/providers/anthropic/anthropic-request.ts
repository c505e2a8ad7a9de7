import type { ContentBlock, LlmRequest, Message } from '../../llm/index.ts';
import { replayableHistory } from '../../llm/index.ts';

type CacheControl = { type: 'ephemeral' };

type WireBlock =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'thinking'; thinking: string; signature: string; cache_control?: CacheControl }
  | { type: 'redacted_thinking'; data: string; cache_control?: CacheControl }
  | { type: 'tool_use'; id: string; name: string; input: unknown; cache_control?: CacheControl }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content: WireBlock[];
      is_error?: boolean;
      cache_control?: CacheControl;
    }
  | {
      type: 'image';
      source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
      cache_control?: CacheControl;
    };

interface WireMessage {
  role: 'user' | 'assistant';
  content: WireBlock[];
}

/**
 * A thinking request: a token budget (`thinking.type: enabled`), or adaptive thinking steered by an effort
 * level (`thinking.type: adaptive` with `output_config.effort`), as the model takes it.
 */
export type AnthropicThinking =
  | { readonly kind: 'budget'; readonly budgetTokens: number }
  | { readonly kind: 'adaptive'; readonly effort: string };

/** How the Messages request is shaped for one call. */
export interface AnthropicRequestOptions {
  /** The provider id whose reasoning blocks are this vendor's own (only those carry valid signatures). */
  provider: string;
  /** `max_tokens` (required by the API). */
  maxTokens: number;
  /** The thinking the call asks for, or undefined for none. */
  thinking: AnthropicThinking | undefined;
  /** False for a model that rejects sampling parameters: no `temperature` is sent. */
  sampling: boolean;
  /** Put prompt-caching breakpoints on the system prompt, the tool list and the latest message. */
  promptCaching: boolean;
}

const ephemeral: CacheControl = { type: 'ephemeral' };

/** Builds the Messages API body of a streaming request. */
export function buildMessagesBody(
  request: LlmRequest,
  options: AnthropicRequestOptions,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: options.maxTokens,
    stream: true,
  };
  const system = collectSystem(request);
  if (system !== '') {
    const block: WireBlock = { type: 'text', text: system };
    if (options.promptCaching) block.cache_control = ephemeral;
    body.system = [block];
  }
  // Tool calls are replayed in a form the vendor accepts (valid names, JSON-object input, unique ids).
  const messages = toWireMessages(replayableHistory(request.messages), options.provider);
  if (options.promptCaching) markLatest(messages);
  body.messages = messages;
  if (request.tools !== undefined && request.tools.length > 0) {
    const tools: Record<string, unknown>[] = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }));
    if (options.promptCaching) tools[tools.length - 1]!.cache_control = ephemeral;
    body.tools = tools;
  }
  const thinking = options.thinking;
  if (thinking?.kind === 'budget') {
    body.thinking = { type: 'enabled', budget_tokens: thinking.budgetTokens };
  } else if (thinking?.kind === 'adaptive') {
    body.thinking = { type: 'adaptive' };
    body.output_config = { effort: thinking.effort };
  } else if (request.temperature !== undefined && options.sampling) {
    // With thinking on, the API accepts no temperature other than its default.
    body.temperature = request.temperature;
  }
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = [...request.stop];
  return body;
}

function collectSystem(request: LlmRequest): string {
  const parts: string[] = [];
  if (request.system !== undefined && request.system !== '') parts.push(request.system);
  for (const message of request.messages) {
    if (message.role !== 'system') continue;
    for (const block of message.content)
      if (block.type === 'text' && block.text !== '') parts.push(block.text);
  }
  return parts.join('\n\n');
}

function toWireMessages(messages: readonly Message[], provider: string): WireMessage[] {
  const out: WireMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const content =
      message.role === 'assistant' ? assistantBlocks(message, provider) : userBlocks(message.content);
    if (content.length === 0) continue;
    const last = out[out.length - 1];
    // The API wants alternating roles: consecutive same-role messages merge into one.
    if (last !== undefined && last.role === message.role) {
      last.content.push(...content);
      if (message.role === 'user') last.content = toolResultsFirst(last.content);
    } else {
      out.push({ role: message.role, content });
    }
  }
  return out;
}

// Tool results must open the user turn that answers a tool_use; text riding along goes after them.
function toolResultsFirst(blocks: WireBlock[]): WireBlock[] {
  return [
    ...blocks.filter((block) => block.type === 'tool_result'),
    ...blocks.filter((block) => block.type !== 'tool_result'),
  ];
}

function assistantBlocks(message: Message, provider: string): WireBlock[] {
  const source = message.source as { kind: string; provider?: unknown };
  const own = source.kind === 'model' && source.provider === provider;
  const blocks: WireBlock[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'reasoning':
        // Thinking is replayed byte for byte with its signature; foreign or unsigned reasoning cannot be.
        if (!own) break;
        if (block.redacted !== undefined) blocks.push({ type: 'redacted_thinking', data: block.redacted });
        else if (block.signature !== undefined)
          blocks.push({ type: 'thinking', thinking: block.text, signature: block.signature });
        break;
      case 'text':
        if (block.text !== '') blocks.push({ type: 'text', text: block.text });
        break;
      case 'tool-call':
        blocks.push({ type: 'tool_use', id: block.id, name: block.name, input: toolInput(block.arguments) });
        break;
      case 'image':
      case 'tool-result':
        break;
    }
  }
  return blocks;
}

// The history was made replayable first, so the arguments are always a JSON object text here.
function toolInput(raw: string): unknown {
  return JSON.parse(raw) as unknown;
}

function userBlocks(content: readonly ContentBlock[]): WireBlock[] {
  const blocks: WireBlock[] = [];
  for (const block of content) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') blocks.push({ type: 'text', text: block.text });
        break;
      case 'image':
        blocks.push(imageBlock(block.mediaType, block.data, block.url));
        break;
      case 'tool-result': {
        const inner = userBlocks(block.content).filter(
          (part) => part.type === 'text' || part.type === 'image',
        );
        const result: WireBlock = { type: 'tool_result', tool_use_id: block.toolCallId, content: inner };
        if (block.isError === true) result.is_error = true;
        blocks.push(result);
        break;
      }
      case 'reasoning':
      case 'tool-call':
        break;
    }
  }
  return toolResultsFirst(blocks);
}

function imageBlock(mediaType: string, data: string | undefined, url: string | undefined): WireBlock {
  if (url !== undefined) return { type: 'image', source: { type: 'url', url } };
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data: data ?? '' } };
}

/**
 * Places the two sliding cache breakpoints (with the system prompt's and the tools' that makes the
 * API's limit of four): on the latest message, and on the last message before the latest assistant
 * message, which is where the previous request of this conversation ended. Anthropic looks for a
 * cached prefix only up to 20 blocks before a breakpoint; a step with many parallel tool calls adds
 * more blocks than that, and without the second breakpoint its request would read nothing from the
 * cache the previous request wrote.
 */
function markLatest(messages: WireMessage[]): void {
  const last = messages.length - 1;
  if (last < 0) return;
  markMessage(messages[last]!);
  let assistant = last;
  while (assistant >= 0 && messages[assistant]!.role !== 'assistant') assistant--;
  if (assistant > 0 && assistant - 1 !== last) markMessage(messages[assistant - 1]!);
}

function markMessage(message: WireMessage): void {
  // Thinking blocks cannot carry cache_control; the breakpoint goes on the latest block that can.
  for (let index = message.content.length - 1; index >= 0; index--) {
    const candidate = message.content[index]!;
    if (candidate.type !== 'thinking' && candidate.type !== 'redacted_thinking') {
      candidate.cache_control = ephemeral;
      return;
    }
  }
}
