import { randomId } from './random-id.ts';
import { isJsonSnapshot, rememberSnapshot, snapshotJson } from './lossless-json.ts';
import { blocksLiteral } from './shape-snapshot.ts';

/** Plain text. */
export interface TextBlock {
  type: 'text';
  text: string;
}

/** Model reasoning; `signature` / `redacted` carry vendor replay data unchanged. */
export interface ReasoningBlock {
  type: 'reasoning';
  text: string;
  signature?: string;
  redacted?: string;
}

/** An image: its media type with inline base64 `data` (what Rein's front ends send) or an https `url`. */
export interface ImageBlock {
  type: 'image';
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp` in a user message (`imageMediaTypes`). */
  mediaType: string;
  /** The image bytes, base64 (no `data:` prefix); the log keeps them, so a session replays on its own. */
  data?: string;
  /** A URL the vendor fetches instead, for images that already live on the web. */
  url?: string;
}

/** A tool call; `arguments` is the raw JSON string exactly as the model produced it. */
export interface ToolCallBlock {
  type: 'tool-call';
  id: string;
  name: string;
  arguments: string;
}

/** A tool's result, answering the call with the same `toolCallId`. */
export interface ToolResultBlock {
  type: 'tool-result';
  toolCallId: string;
  content: ContentBlock[];
  isError?: boolean;
}

/** Any content block. */
export type ContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock;

/** Where a message came from; plugins add their own kinds (e.g. `goal`). */
export type MessageSource =
  | { kind: 'user' }
  | { kind: 'steer' }
  | { kind: 'inject'; origin?: string }
  | { kind: 'plugin'; plugin: string; form?: string; [key: string]: unknown }
  | { kind: 'model'; provider: string; model: string; replayState?: unknown }
  | { kind: 'tool'; callId: string }
  | { kind: string; [key: string]: unknown };

/** Any message; deep-frozen at creation. */
export interface Message {
  readonly id: string;
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: readonly ContentBlock[];
  readonly source: MessageSource;
}

/** A user-role message: a prompt, steering, injected context or a compaction checkpoint. */
export interface UserMessage extends Message {
  readonly role: 'user';
}

/** A model's reply. */
export interface AssistantMessage extends Message {
  readonly role: 'assistant';
  readonly source: { kind: 'model'; provider: string; model: string; replayState?: unknown };
}

/** A user-role message carrying exactly one tool-result block. */
export interface ToolResultMessage extends Message {
  readonly role: 'user';
  readonly source: { kind: 'tool'; callId: string };
}

/** The source of a message the user typed, as one shared snapshot (messages share it, not copies). */
export const userMessageSource: MessageSource = snapshotJson({ kind: 'user' });

/** Creates a frozen user message from text or blocks; throws when the content is not lossless JSON. */
export function createUserMessage(
  content: string | readonly ContentBlock[],
  source: MessageSource = userMessageSource,
  id: string = randomId(),
): UserMessage {
  const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return snapshotJson({ id, role: 'user' as const, content: blocks as ContentBlock[], source });
}

/** Creates a frozen assistant message. */
export function createAssistantMessage(
  content: readonly ContentBlock[],
  source: AssistantMessage['source'],
  id: string = randomId(),
): AssistantMessage {
  // The usual reply (text and call blocks, the route's shared source) is built as the snapshot would copy it.
  const blocks = typeof id === 'string' && isJsonSnapshot(source) ? blocksLiteral(content) : undefined;
  if (blocks !== undefined)
    return rememberSnapshot(Object.freeze({ id, role: 'assistant' as const, content: blocks, source }));
  return snapshotJson({ id, role: 'assistant' as const, content: content as ContentBlock[], source });
}

/** Creates a frozen tool-result message answering `callId`. */
export function createToolResultMessage(
  callId: string,
  content: readonly ContentBlock[],
  isError: boolean,
  id: string = randomId(),
): ToolResultMessage {
  // The usual result (text blocks) is built as the snapshot below would copy it.
  const blocks = typeof id === 'string' && typeof callId === 'string' ? blocksLiteral(content) : undefined;
  if (blocks !== undefined) {
    const built: ToolResultBlock = isError
      ? { type: 'tool-result', toolCallId: callId, content: blocks as ContentBlock[], isError: true }
      : { type: 'tool-result', toolCallId: callId, content: blocks as ContentBlock[] };
    return rememberSnapshot(
      Object.freeze({
        id,
        role: 'user' as const,
        content: Object.freeze([Object.freeze(built)]),
        source: Object.freeze({ kind: 'tool' as const, callId }),
      }),
    );
  }
  const block: ToolResultBlock = {
    type: 'tool-result',
    toolCallId: callId,
    content: content as ContentBlock[],
  };
  if (isError) block.isError = true;
  return snapshotJson({ id, role: 'user' as const, content: [block], source: { kind: 'tool', callId } });
}

/** The concatenated text of a message's text blocks. */
export function messageText(message: Pick<Message, 'content'>): string {
  let text = '';
  for (const block of message.content) if (block.type === 'text') text += block.text;
  return text;
}
