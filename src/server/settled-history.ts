import type { AnySessionEvent } from '../index.ts';

/**
 * The events of a log a transcript needs to show it: every event except the stream chunks in the middle
 * of steps whose `assistant/message` is in the log (that message carries the complete blocks the chunks
 * built). A step's first chunk stays, so its answer keeps its place among the other items, and so does
 * every `finish` chunk (it tells a failed or cut attempt); steps without a message keep all their chunks.
 * Seqs are kept; about half of a tool-heavy log is such chunks.
 */
export function settledHistory(events: readonly AnySessionEvent[]): AnySessionEvent[] {
  const answered = new Set<string>();
  for (const event of events) {
    if (event.type !== 'assistant/message') continue;
    const { turn, step } = event.data as { turn: number; step: number };
    answered.add(`${turn}.${step}`);
  }
  const started = new Set<string>();
  return events.filter((event) => {
    if (event.type !== 'assistant/chunk') return true;
    const { turn, step, chunk } = event.data as { turn: number; step: number; chunk: { type: string } };
    const key = `${turn}.${step}`;
    if (!answered.has(key) || chunk.type === 'finish' || !started.has(key)) {
      started.add(key);
      return true;
    }
    return false;
  });
}
