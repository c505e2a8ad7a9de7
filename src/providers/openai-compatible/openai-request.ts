import type { ContentBlock, LlmRequest, Message, ToolSchema } from '../../llm/index.ts';
import { replayableHistory } from '../../llm/index.ts';

/** How an OpenAI-compatible vendor wants a request shaped; variants declare these, code never checks names. */
export interface OpenAIRequestStyle {
  /** The provider id whose reasoning blocks are this vendor's own (others are never replayed). */
  provider: string;
  /** Send `reasoning_content` back on assistant messages of tool-calling exchanges (DeepSeek thinking mode). */
  reasoningReplay: boolean;
  /** The field that carries the output limit: `max_tokens` (most servers) or `max_completion_tokens` (OpenAI). */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Ask for a final usage chunk with `stream_options.include_usage`. */
  streamUsage: boolean;
}

type WireContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | WireContentPart[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
      reasoning_content?: string;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Builds the Chat Completions body of a streaming request. */
export function buildChatCompletionsBody(
  request: LlmRequest,
  style: OpenAIRequestStyle,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: toWireMessages(request, style),
    stream: true,
  };
  if (style.streamUsage) body.stream_options = { include_usage: true };
  if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools.map(toWireTool);
  if (request.maxTokens !== undefined) body[style.maxTokensField] = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = [...request.stop];
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  return body;
}

function toWireTool(tool: ToolSchema): Record<string, unknown> {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function toWireMessages(request: LlmRequest, style: OpenAIRequestStyle): WireMessage[] {
  const out: WireMessage[] = [];
  if (request.system !== undefined && request.system !== '')
    out.push({ role: 'system', content: request.system });
  // Tool calls are replayed in a form the vendor accepts (valid names, JSON-object arguments, unique ids).
  const messages = replayableHistory(request.messages);
  const replay = style.reasoningReplay ? exchangesWithToolCalls(messages) : new Set<Message>();
  for (const message of messages) {
    if (message.role === 'system') {
      out.push({ role: 'system', content: plainText(message.content) });
    } else if (message.role === 'assistant') {
      out.push(toWireAssistant(message, replay.has(message) && isOwn(message, style.provider)));
    } else {
      pushUser(out, message);
    }
  }
  return out;
}

function toWireAssistant(message: Message, replayReasoning: boolean): WireMessage {
  let text = '';
  let reasoning = '';
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'reasoning') reasoning += block.text;
    else if (block.type === 'tool-call')
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: block.arguments },
      });
  }
  const wire: WireMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) wire.tool_calls = calls;
  // Thinking mode with tools requires the reasoning of tool-calling exchanges on every later request.
  if (replayReasoning) wire.reasoning_content = reasoning;
  return wire;
}

function pushUser(out: WireMessage[], message: Message): void {
  const parts: WireContentPart[] = [];
  for (const block of message.content) {
    if (block.type === 'tool-result') {
      out.push({
        role: 'tool',
        tool_call_id: block.toolCallId,
        content: toolResultText(block.content, block.isError),
      });
    } else if (block.type === 'text') {
      parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      const url = block.url ?? `data:${block.mediaType};base64,${block.data ?? ''}`;
      parts.push({ type: 'image_url', image_url: { url } });
    }
  }
  if (parts.length === 0) return;
  const onlyText = parts.every((part) => part.type === 'text');
  out.push({
    role: 'user',
    content: onlyText ? parts.map((part) => (part as { text: string }).text).join('') : parts,
  });
}

function toolResultText(content: readonly ContentBlock[], isError: boolean | undefined): string {
  const parts: string[] = [];
  for (const block of content) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'image') parts.push(`[image: ${block.mediaType}]`);
  }
  const text = parts.join('\n');
  return isError === true && text === '' ? 'error' : text;
}

function plainText(content: readonly ContentBlock[]): string {
  let text = '';
  for (const block of content) if (block.type === 'text') text += block.text;
  return text;
}

function isOwn(message: Message, provider: string): boolean {
  const source = message.source as { kind: string; provider?: unknown };
  return source.kind === 'model' && source.provider === provider;
}

function isPrompt(message: Message): boolean {
  return message.role === 'user' && !message.content.some((block) => block.type === 'tool-result');
}

/** The assistant messages of exchanges (between two prompts) in which the model called a tool. */
function exchangesWithToolCalls(messages: readonly Message[]): Set<Message> {
  const marked = new Set<Message>();
  let exchange: Message[] = [];
  let called = false;
  const close = (): void => {
    if (called) for (const message of exchange) marked.add(message);
    exchange = [];
    called = false;
  };
  for (const message of messages) {
    if (isPrompt(message)) {
      close();
      continue;
    }
    if (message.role !== 'assistant') continue;
    exchange.push(message);
    if (message.content.some((block) => block.type === 'tool-call')) called = true;
  }
  close();
  return marked;
}
