import type { LogEvent } from './types.ts';

/** A run of consecutive deltas of one block, as the server encodes it (`src/server/delta-runs.ts`). */
interface DeltaRun {
  run: 'text-delta' | 'reasoning-delta';
  turn: number;
  step: number;
  index: number;
  seq: number;
  time: number;
  texts: string[];
  gaps: number[];
}

/** The durable events of a `log-runs` message, in seq order: every run rebuilt into its events. */
export function decodeDeltaRuns(entries: readonly (LogEvent | DeltaRun)[]): LogEvent[] {
  const events: LogEvent[] = [];
  for (const entry of entries) {
    if (!('run' in entry)) {
      events.push(entry);
      continue;
    }
    const { run: type, turn, step, index, texts, gaps } = entry;
    let time = entry.time;
    for (let at = 0; at < texts.length; at++) {
      if (at > 0) time += gaps[at - 1]!;
      events.push({
        type: 'assistant/chunk',
        seq: entry.seq + at,
        time,
        data: { turn, step, chunk: { type, index, text: texts[at]! } },
      });
    }
  }
  return events;
}
