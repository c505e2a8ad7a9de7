import type { AnySessionEvent } from '../index.ts';

/**
 * Consecutive text (or reasoning) deltas of one block, as one entry of a `log-runs` message: event
 * `i` of the run is `{ type: 'assistant/chunk', seq: seq + i, time, data: { turn, step, chunk: { type:
 * delta, index, text: texts[i] } } }`, its time the run's `time` plus `gaps[0..i-1]`. A streaming answer
 * is mostly such events; the envelope each repeats is 20 times its text.
 */
export interface DeltaRun {
  readonly run: 'text-delta' | 'reasoning-delta';
  readonly turn: number;
  readonly step: number;
  readonly index: number;
  readonly seq: number;
  readonly time: number;
  readonly texts: readonly string[];
  /** Milliseconds from each event to the next (one fewer than `texts`). */
  readonly gaps: readonly number[];
}

/** One entry of a `log-runs` message: a durable event as logged, or a run of deltas. */
export type LogRunEntry = AnySessionEvent | DeltaRun;

interface DeltaShape {
  delta: DeltaRun['run'];
  turn: number;
  step: number;
  index: number;
  text: string;
}

/**
 * Encodes durable events (consecutive seqs) for a `log-runs` message: two or more consecutive deltas
 * of one block become one run; any event a run could not rebuild exactly (another type, another field)
 * stays as it is. Decoding (`web/src/delta-runs.ts`) gives back events equal to these.
 */
export function encodeDeltaRuns(events: readonly AnySessionEvent[]): LogRunEntry[] {
  const entries: LogRunEntry[] = [];
  let index = 0;
  while (index < events.length) {
    const first = events[index]!;
    const shape = deltaShape(first);
    let end = index + 1;
    if (shape !== undefined)
      while (end < events.length && sameRun(shape, events[end]!, events[end - 1]!)) end++;
    if (end - index < 2) {
      entries.push(first);
      index = end;
      continue;
    }
    const texts: string[] = [];
    const gaps: number[] = [];
    for (let at = index; at < end; at++) {
      texts.push(deltaShape(events[at]!)!.text);
      if (at > index) gaps.push(events[at]!.time - events[at - 1]!.time);
    }
    entries.push({
      run: shape!.delta,
      turn: shape!.turn,
      step: shape!.step,
      index: shape!.index,
      seq: first.seq,
      time: first.time,
      texts,
      gaps,
    });
    index = end;
  }
  return entries;
}

function sameRun(shape: DeltaShape, event: AnySessionEvent, previous: AnySessionEvent): boolean {
  if (event.seq !== previous.seq + 1) return false;
  const next = deltaShape(event);
  return (
    next !== undefined &&
    next.delta === shape.delta &&
    next.turn === shape.turn &&
    next.step === shape.step &&
    next.index === shape.index
  );
}

/** The parts of a delta event, when it has exactly the fields a run rebuilds; otherwise undefined. */
function deltaShape(event: AnySessionEvent): DeltaShape | undefined {
  if (
    event.type !== 'assistant/chunk' ||
    !hasKeys(event, 4) ||
    !Number.isInteger(event.seq) ||
    !Number.isInteger(event.time)
  )
    return undefined;
  const data = event.data as { turn?: unknown; step?: unknown; chunk?: unknown };
  if (typeof data !== 'object' || data === null || !hasKeys(data, 3)) return undefined;
  const { turn, step, chunk } = data;
  if (typeof turn !== 'number' || typeof step !== 'number' || typeof chunk !== 'object' || chunk === null)
    return undefined;
  const { type, index, text } = chunk as { type?: unknown; index?: unknown; text?: unknown };
  if (
    (type !== 'text-delta' && type !== 'reasoning-delta') ||
    typeof index !== 'number' ||
    typeof text !== 'string' ||
    !hasKeys(chunk, 3)
  )
    return undefined;
  return { delta: type, turn, step, index, text };
}

// Counting keys is enough: the named ones were each checked to be present.
function hasKeys(value: object, count: number): boolean {
  return Object.keys(value).length === count;
}
