import type { ContentBlock, Message, ToolCallBlock } from './message.ts';

/** The name a replayed tool call gets when the model sent none. */
export const placeholderToolName = 'unnamed_tool';

// What vendors accept as a function name (OpenAI and Anthropic both use this pattern).
const validToolName = /^[a-zA-Z0-9_-]{1,64}$/;

/** A tool-call name the vendor accepts: the model's own when valid, else a sanitized or placeholder one. */
export function replayableToolName(name: string): string {
  if (validToolName.test(name)) return name;
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return /[a-zA-Z0-9]/.test(cleaned) ? cleaned : placeholderToolName;
}

/**
 * Tool-call arguments as a JSON object text the vendor accepts: empty → `{}`, a JSON object unchanged,
 * anything else (not JSON, an array, a bare value) wrapped as `{"raw_arguments": "<what the model sent>"}`.
 */
export function replayableToolArguments(raw: string): string {
  if (raw.trim() === '') return '{}';
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return raw;
  } catch {
    // Not JSON: wrapped below, so the model still sees what it sent.
  }
  return JSON.stringify({ raw_arguments: raw });
}

/**
 * The history as a vendor will accept it on the next request: every assistant tool call gets a valid
 * name, JSON-object arguments and an id unique within its message, and each tool result names the id
 * its call now carries. Messages that need no change are returned as they are (the log keeps what the
 * model really sent; this only shapes the replay).
 */
export function replayableHistory(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  // Original call id → the replay ids of the latest assistant message's calls with it, in order.
  let renamed = new Map<string, string[]>();
  for (let position = 0; position < messages.length; position++) {
    const message = messages[position]!;
    let replacement: Message | undefined;
    if (message.role === 'assistant') {
      const shaped = shapeCalls(message.content);
      renamed = shaped.renamed;
      if (shaped.content !== undefined) replacement = { ...message, content: shaped.content };
    } else if (renamed.size > 0) {
      const content = remapResults(message.content, renamed);
      if (content !== undefined) replacement = { ...message, content };
    }
    if (replacement !== undefined) {
      out ??= messages.slice(0, position);
      out.push(replacement);
    } else if (out !== undefined) {
      out.push(message);
    }
  }
  return out ?? messages;
}

function shapeCalls(content: readonly ContentBlock[]): {
  content: ContentBlock[] | undefined;
  renamed: Map<string, string[]>;
} {
  const renamed = new Map<string, string[]>();
  const used = new Set<string>();
  let changed: ContentBlock[] | undefined;
  for (let position = 0; position < content.length; position++) {
    const block = content[position]!;
    if (block.type !== 'tool-call') {
      changed?.push(block);
      continue;
    }
    let id = block.id;
    if (id === '' || used.has(id)) {
      let suffix = position;
      do id = `${block.id === '' ? 'call' : block.id}-${suffix++}`;
      while (used.has(id) || content.some((other) => other.type === 'tool-call' && other.id === id));
      renamed.set(block.id, [...(renamed.get(block.id) ?? []), id]);
    }
    used.add(id);
    const name = replayableToolName(block.name);
    const args = replayableToolArguments(block.arguments);
    if (id !== block.id || name !== block.name || args !== block.arguments) {
      changed ??= content.slice(0, position);
      const shaped: ToolCallBlock = { type: 'tool-call', id, name, arguments: args };
      changed.push(shaped);
    } else {
      changed?.push(block);
    }
  }
  // Only duplicated or empty ids move; the first call with an id keeps it, so results map in order.
  for (const [original, ids] of renamed) if (used.has(original)) ids.unshift(original);
  return { content: changed, renamed };
}

function remapResults(
  content: readonly ContentBlock[],
  renamed: Map<string, string[]>,
): ContentBlock[] | undefined {
  let changed: ContentBlock[] | undefined;
  for (let position = 0; position < content.length; position++) {
    const block = content[position]!;
    const queue = block.type === 'tool-result' ? renamed.get(block.toolCallId) : undefined;
    const next = queue?.shift();
    if (block.type === 'tool-result' && next !== undefined && next !== block.toolCallId) {
      changed ??= content.slice(0, position);
      changed.push({ ...block, toolCallId: next });
    } else {
      changed?.push(block);
    }
  }
  return changed;
}
