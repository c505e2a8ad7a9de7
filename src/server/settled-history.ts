import type { AnySessionEvent } from '../index.ts';

/**
 * The events of a log a transcript needs to show it: every event except the stream chunks of steps
 * whose `assistant/message` is in the log (that message carries the complete blocks the chunks built).
 * Chunks of a step that never got its message (a cut or failed attempt, a stream still running) stay.
 * Seqs are kept, so a reader can tell where to continue; about half a tool-heavy log is such chunks.
 */
export function settledHistory(events: readonly AnySessionEvent[]): AnySessionEvent[] {
  const answered = new Set<string>();
  for (const event of events) {
    if (event.type !== 'assistant/message') continue;
    const { turn, step } = event.data as { turn: number; step: number };
    answered.add(`${turn}.${step}`);
  }
  return events.filter((event) => {
    if (event.type !== 'assistant/chunk') return true;
    const { turn, step } = event.data as { turn: number; step: number };
    return !answered.has(`${turn}.${step}`);
  });
}
