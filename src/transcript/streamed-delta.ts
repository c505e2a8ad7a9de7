/**
 * The key under which both ends of a `log-runs` stream remember the deltas of one block: the delta's
 * type (`text-delta` or `reasoning-delta`), turn, step and block index.
 */
export function streamedDeltaKey(type: string, turn: number, step: number, index: number): string {
  return `${type} ${turn} ${step} ${index}`;
}

/**
 * The key and text of an event that a `log-runs` stream counts as a streamed delta: an `assistant/chunk`
 * whose chunk is a text or reasoning delta with a string text and numeric turn, step and index. The
 * server that leaves text out of a message and the page that fills it back in apply this one rule.
 */
export function streamedDelta(event: {
  type: string;
  data?: unknown;
}): { key: string; text: string } | undefined {
  if (event.type !== 'assistant/chunk') return undefined;
  const { turn, step, chunk } = (event.data ?? {}) as { turn?: unknown; step?: unknown; chunk?: unknown };
  const { type, index, text } = (chunk ?? {}) as { type?: unknown; index?: unknown; text?: unknown };
  if (
    (type !== 'text-delta' && type !== 'reasoning-delta') ||
    typeof text !== 'string' ||
    typeof turn !== 'number' ||
    typeof step !== 'number' ||
    typeof index !== 'number'
  )
    return undefined;
  return { key: streamedDeltaKey(type, turn, step, index), text };
}

/**
 * The delta texts one end of a `log-runs` stream has seen since the last message, by `streamedDeltaKey`,
 * in seq order: the server's record of what it sent and the page's of what it received, kept alike.
 */
export class StreamedDeltaTexts extends Map<string, string[]> {
  /** The texts kept under `key`, a new empty list there when it has none yet. */
  of(key: string): string[] {
    let texts = this.get(key);
    if (texts === undefined) {
      texts = [];
      this.set(key, texts);
    }
    return texts;
  }
}
