import type { AnySessionEvent } from '../index.ts';
import { StreamedDeltaTexts, streamedDelta, streamedDeltaKey } from '../internal.ts';

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

/**
 * An `assistant/message` whose text or reasoning blocks are each exactly the text the same stream
 * already sent as deltas: `streamed` is the event with those blocks' `text` left empty, and each pair
 * of `from` names a block (its position in `data.message.content`) and the chunk block index whose
 * deltas, joined in order, are its text. A long answer then crosses the wire once, as it streams.
 */
export interface StreamedMessage {
  readonly streamed: AnySessionEvent;
  readonly from: readonly (readonly [content: number, index: number])[];
}

/**
 * A `block-end` chunk whose text or reasoning block is exactly the deltas of its index the same stream
 * sent: `ended` is the chunk with the block's `text` left empty.
 */
export interface StreamedBlockEnd {
  readonly ended: AnySessionEvent;
}

/**
 * A compaction's checkpoint `user/message` whose text block frames the summary the same stream sent in
 * the `compaction/summary` just before it: `framed` is the event with that block's `text` left empty,
 * `block` its position in `data.content`, and the text is `before` + the summary + `after`. The summary
 * then crosses the wire once, not twice.
 */
export interface FramedSummary {
  readonly framed: AnySessionEvent;
  readonly block: number;
  readonly before: string;
  readonly after: string;
}

/**
 * An event whose long `sourceEventSeqs` (its last field) is runs of consecutive seqs, as a streamed
 * answer's message lists every delta it was built from: `sourced` is the event (or the streamed
 * message) without the field, `sources` the seqs as `[first, count]` pairs. The seqs of a 100,000-delta
 * answer are 651 KB of JSON as a list and a few bytes as ranges.
 */
export interface SourcedEvent {
  readonly sourced: AnySessionEvent | StreamedMessage | FramedSummary;
  readonly sources: readonly (readonly [first: number, count: number])[];
}

/** One entry of a `log-runs` message: a durable event as logged, a run of deltas, or a streamed block. */
export type LogRunEntry =
  AnySessionEvent | DeltaRun | StreamedMessage | StreamedBlockEnd | FramedSummary | SourcedEvent;

// Seq lists shorter than this go as they are: ranges would save nothing worth a second shape.
const shortestRangedSources = 64;
// Summaries shorter than this are sent twice: a reference would save nothing worth a second shape.
const shortestFramedSummary = 4_096;

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
  return new DeltaRunEncoder().encode(events);
}

/**
 * The `log-runs` encoding of one stream, message after message: besides runs, it remembers the deltas
 * it sent since the last `assistant/message`, and sends that message as a `StreamedMessage` when its
 * blocks are exactly those deltas joined. The stream's decoder (`DeltaRunDecoder` in the Web UI)
 * remembers the same deltas by the same rule, so it rebuilds the message as logged.
 */
export class DeltaRunEncoder {
  // The delta texts sent since the last message, by `deltaKey`, in seq order.
  readonly #sent = new StreamedDeltaTexts();
  // The summary of the last `compaction/summary` this stream sent.
  #summary: string | undefined;

  /** The entries of one message of the stream (its events have consecutive seqs). */
  encode(events: readonly AnySessionEvent[]): LogRunEntry[] {
    const entries: LogRunEntry[] = [];
    let index = 0;
    while (index < events.length) {
      const end = this.#encodeFrom(events, index, entries);
      index = end;
    }
    return entries;
  }

  #encodeFrom(events: readonly AnySessionEvent[], index: number, entries: LogRunEntry[]): number {
    const first = events[index]!;
    const shape = deltaShape(first);
    let end = index + 1;
    if (shape !== undefined)
      while (end < events.length && sameRun(shape, events[end]!, events[end - 1]!)) end++;
    if (end - index < 2) {
      entries.push(this.#single(first));
      return end;
    }
    const texts: string[] = [];
    const gaps: number[] = [];
    for (let at = index; at < end; at++) {
      texts.push(deltaShape(events[at]!)!.text);
      if (at > index) gaps.push(events[at]!.time - events[at - 1]!.time);
    }
    const sent = this.#sent.of(streamedDeltaKey(shape!.delta, shape!.turn, shape!.step, shape!.index));
    for (const text of texts) sent.push(text);
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
    return end;
  }

  // An event sent on its own: a delta is remembered; a message may go out as a `StreamedMessage`.
  #single(event: AnySessionEvent): LogRunEntry {
    const delta = streamedDelta(event);
    if (delta !== undefined) {
      this.#sent.of(delta.key).push(delta.text);
      return event;
    }
    if (event.type === 'assistant/chunk') return this.#streamedBlockEnd(event);
    if (event.type === 'compaction/summary') {
      const summary = (event.data as { summary?: unknown }).summary;
      this.#summary = typeof summary === 'string' ? summary : undefined;
    }
    if (event.type === 'user/message') return withSourceRanges(event, this.#framedSummary(event));
    if (event.type !== 'assistant/message') return withSourceRanges(event, event);
    const entry = this.#streamedMessage(event);
    this.#sent.clear();
    return withSourceRanges(event, entry);
  }

  #streamedBlockEnd(event: AnySessionEvent): LogRunEntry {
    const data = event.data as { turn?: unknown; step?: unknown; chunk?: unknown };
    const chunk = data.chunk as { type?: unknown; index?: unknown; block?: unknown };
    if (chunk.type !== 'block-end' || typeof data.turn !== 'number' || typeof data.step !== 'number')
      return event;
    const { type, text } = (chunk.block ?? {}) as { type?: unknown; text?: unknown };
    if ((type !== 'text' && type !== 'reasoning') || typeof text !== 'string' || text === '') return event;
    if (typeof chunk.index !== 'number') return event;
    const key = streamedDeltaKey(
      type === 'text' ? 'text-delta' : 'reasoning-delta',
      data.turn,
      data.step,
      chunk.index,
    );
    const sent = this.#sent.get(key);
    if (sent === undefined || !spells(sent, text)) return event;
    const block = chunk.block as object;
    return { ended: { ...event, data: { ...data, chunk: { ...chunk, block: { ...block, text: '' } } } } };
  }

  #framedSummary(event: AnySessionEvent): AnySessionEvent | FramedSummary {
    const summary = this.#summary;
    if (summary === undefined || summary.length < shortestFramedSummary) return event;
    const data = event.data as { content?: unknown };
    if (!Array.isArray(data.content)) return event;
    for (const [block, part] of (data.content as unknown[]).entries()) {
      const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
      if (type !== 'text' || typeof text !== 'string') continue;
      const at = text.indexOf(summary);
      if (at === -1) continue;
      const content = (data.content as object[]).map((other, position) =>
        position === block ? { ...other, text: '' } : other,
      );
      return {
        framed: { ...event, data: { ...data, content } } as AnySessionEvent,
        block,
        before: text.slice(0, at),
        after: text.slice(at + summary.length),
      };
    }
    return event;
  }

  #streamedMessage(event: AnySessionEvent): LogRunEntry {
    if (this.#sent.size === 0) return event;
    const data = event.data as { turn?: unknown; step?: unknown; message?: { content?: unknown } };
    const content = data.message?.content;
    if (!Array.isArray(content)) return event;
    const from: [number, number][] = [];
    const used = new Set<string>();
    for (const [position, block] of (content as unknown[]).entries()) {
      const { type, text } = (block ?? {}) as { type?: unknown; text?: unknown };
      if ((type !== 'text' && type !== 'reasoning') || typeof text !== 'string' || text === '') continue;
      const delta = type === 'text' ? 'text-delta' : 'reasoning-delta';
      if (typeof data.turn !== 'number' || typeof data.step !== 'number') return event;
      const prefix = `${delta} ${data.turn} ${data.step} `;
      for (const [key, texts] of this.#sent) {
        if (!key.startsWith(prefix) || used.has(key) || !spells(texts, text)) continue;
        used.add(key);
        from.push([position, Number(key.slice(prefix.length))]);
        break;
      }
    }
    if (from.length === 0) return event;
    const blank = new Set(from.map(([position]) => position));
    const message = data.message as object;
    const streamed = {
      ...event,
      data: {
        ...data,
        message: {
          ...message,
          content: (content as object[]).map((block, position) =>
            blank.has(position) ? { ...block, text: '' } : block,
          ),
        },
      },
    } as AnySessionEvent;
    return { streamed, from };
  }
}

/**
 * `entry` (the event itself, or its streamed message) as a `SourcedEvent` when the event's
 * `sourceEventSeqs` is its last field, long, and few runs of consecutive integers; otherwise `entry`.
 */
function withSourceRanges(event: AnySessionEvent, entry: AnySessionEvent | LogRunEntry): LogRunEntry {
  const seqs = event.sourceEventSeqs;
  if (
    seqs === undefined ||
    seqs.length < shortestRangedSources ||
    Object.keys(event).at(-1) !== 'sourceEventSeqs'
  )
    return entry;
  const sources: [number, number][] = [];
  for (const seq of seqs) {
    if (!Number.isSafeInteger(seq)) return entry;
    const last = sources[sources.length - 1];
    if (last !== undefined && seq === last[0] + last[1]) last[1]++;
    else sources.push([seq, 1]);
  }
  // Ranges pay only when the seqs run on (a pair per seq would be longer than the list).
  if (sources.length * 4 > seqs.length) return entry;
  const strip = ({ sourceEventSeqs: _dropped, ...rest }: AnySessionEvent): AnySessionEvent =>
    rest as AnySessionEvent;
  const sourced =
    'streamed' in entry
      ? { ...entry, streamed: strip(entry.streamed) }
      : 'framed' in entry
        ? { ...entry, framed: strip(entry.framed) }
        : strip(event);
  return { sourced, sources };
}

/** True when `texts` joined are exactly `text` (lengths first: most mismatches cost nothing). */
function spells(texts: readonly string[], text: string): boolean {
  let length = 0;
  for (const piece of texts) length += piece.length;
  return length === text.length && texts.join('') === text;
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
