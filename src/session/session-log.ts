import type { AnySessionEvent } from './session-event.ts';

/** Read access to a session's committed events, in seq order. */
export interface ReadonlySessionLog extends Iterable<AnySessionEvent> {
  /** The number of events, which is also the next seq. */
  readonly length: number;
  /** The event with this seq (negative counts from the end, as `Array.prototype.at`), or undefined. */
  at(seq: number): AnySessionEvent | undefined;
  /** The type of the event with this seq without building the event, or undefined. */
  typeAt(seq: number): string | undefined;
  /** The events from `start` up to but excluding `end` as a fresh array (negative counts from the end). */
  slice(start?: number, end?: number): AnySessionEvent[];
}

// What an entry holds: the event itself, or a packed chunk event whose entry is its chunk or its text.
const eventEntry = 0;
const chunkEntry = 1;
const textDeltaEntry = 2;
const reasoningDeltaEntry = 3;

const chunkEventType = 'assistant/chunk';
const eventKeys = ['type', 'seq', 'time', 'data'] as const;
const chunkDataKeys = ['turn', 'step', 'chunk'] as const;
const deltaKeys = ['type', 'index', 'text'] as const;
// Entries live in fixed-size pages, so a growing log never copies (or leaves behind) a large array.
const pageBits = 12;
const pageSize = 1 << pageBits;
const pageMask = pageSize - 1;
const firstPageSize = 64;

/**
 * The committed events of one session in seq order. Stream chunks, the bulk of any log, are stored
 * packed: a chunk event keeps only its chunk (a text or reasoning delta only its text) and its time,
 * with turn and step shared by a run of chunks, and is rebuilt as an equal, frozen event when read.
 * Every other event is kept as the very object that was committed.
 */
export class SessionLog implements ReadonlySessionLog {
  readonly #entries: unknown[][] = [];
  readonly #kinds: Uint8Array[] = [];
  readonly #times: Float64Array[] = [];
  #length = 0;
  // Runs of packed chunks sharing turn, step and (for deltas) block index, as parallel arrays.
  readonly #runStarts: number[] = [];
  readonly #runTurns: number[] = [];
  readonly #runSteps: number[] = [];
  readonly #runIndexes: number[] = [];

  /** The number of events, which is also the next seq. */
  get length(): number {
    return this.#length;
  }

  /** Adds the next event; its `seq` must equal `length` and it must be frozen (the caller checks both). */
  push(event: AnySessionEvent): void {
    const seq = this.#length;
    const page = seq >>> pageBits;
    const slot = seq & pageMask;
    if (slot === 0) this.#addPage(page);
    else if (slot === this.#kinds[page]!.length) this.#growFirstPage();
    const kind = packedKindOf(event);
    this.#kinds[page]![slot] = kind;
    this.#length = seq + 1;
    if (kind === eventEntry) {
      this.#entries[page]!.push(event);
      return;
    }
    const data = event.data as { turn: number; step: number; chunk: { index?: number; text?: string } };
    const index = kind === chunkEntry ? -1 : data.chunk.index!;
    const runs = this.#runStarts.length - 1;
    if (
      runs < 0 ||
      this.#runTurns[runs] !== data.turn ||
      this.#runSteps[runs] !== data.step ||
      (index !== -1 && this.#runIndexes[runs] !== index)
    ) {
      this.#runStarts.push(seq);
      this.#runTurns.push(data.turn);
      this.#runSteps.push(data.step);
      this.#runIndexes.push(index);
    }
    this.#times[page]![slot] = event.time;
    this.#entries[page]!.push(kind === chunkEntry ? data.chunk : data.chunk.text);
  }

  /** The event with this seq (negative counts from the end, as `Array.prototype.at`), or undefined. */
  at(seq: number): AnySessionEvent | undefined {
    const length = this.#length;
    const position = seq < 0 ? seq + length : seq;
    if (!(position >= 0 && position < length)) return undefined;
    const page = position >>> pageBits;
    const slot = position & pageMask;
    const entry = this.#entries[page]![slot];
    const kind = this.#kinds[page]![slot]!;
    if (kind === eventEntry) return entry as AnySessionEvent;
    return this.#rebuild(position, kind, entry, this.#times[page]![slot]!);
  }

  /** The type of the event with this seq without building the event, or undefined. */
  typeAt(seq: number): string | undefined {
    const length = this.#length;
    const position = seq < 0 ? seq + length : seq;
    if (!(position >= 0 && position < length)) return undefined;
    const page = position >>> pageBits;
    const slot = position & pageMask;
    return this.#kinds[page]![slot] === eventEntry
      ? (this.#entries[page]![slot] as AnySessionEvent).type
      : chunkEventType;
  }

  /** The events from `start` up to but excluding `end` as a fresh array (negative counts from the end). */
  slice(start = 0, end = this.#length): AnySessionEvent[] {
    const length = this.#length;
    const from = clampIndex(start, length);
    const to = clampIndex(end, length);
    const events: AnySessionEvent[] = [];
    for (let seq = from; seq < to; seq++) events.push(this.at(seq)!);
    return events;
  }

  /** Iterates the events in seq order, up to the length at each step (appends made meanwhile included). */
  *[Symbol.iterator](): Iterator<AnySessionEvent> {
    for (let seq = 0; seq < this.#length; seq++) yield this.at(seq)!;
  }

  #rebuild(seq: number, kind: number, entry: unknown, time: number): AnySessionEvent {
    const run = this.#runOf(seq);
    const chunk =
      kind === chunkEntry
        ? entry
        : Object.freeze({
            type: kind === textDeltaEntry ? 'text-delta' : 'reasoning-delta',
            index: this.#runIndexes[run]!,
            text: entry as string,
          });
    const data = Object.freeze({ turn: this.#runTurns[run]!, step: this.#runSteps[run]!, chunk });
    return Object.freeze({ type: chunkEventType, seq, time, data });
  }

  /** The run holding a packed seq: the last run that starts at or before it. */
  #runOf(seq: number): number {
    const starts = this.#runStarts;
    let low = 0;
    let high = starts.length - 1;
    // Reads cluster at the end of the log: try the last run before searching.
    if (starts[high]! <= seq) return high;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle]! <= seq) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  #addPage(page: number): void {
    // The first page starts small and doubles (a short log stays small); later pages are full-sized.
    const size = page === 0 ? firstPageSize : pageSize;
    this.#entries.push([]);
    this.#kinds.push(new Uint8Array(size));
    this.#times.push(new Float64Array(size));
  }

  #growFirstPage(): void {
    const kinds = new Uint8Array(this.#kinds[0]!.length * 2);
    kinds.set(this.#kinds[0]!);
    this.#kinds[0] = kinds;
    const times = new Float64Array(kinds.length);
    times.set(this.#times[0]!);
    this.#times[0] = times;
  }
}

/** How an event can be stored: only a chunk event of exactly the shape the loop commits is packed. */
function packedKindOf(event: AnySessionEvent): number {
  if (event.type !== chunkEventType || !hasExactKeys(event, eventKeys)) return eventEntry;
  const data = event.data;
  if (!hasExactKeys(data, chunkDataKeys)) return eventEntry;
  const { turn, step, chunk } = data as { turn: unknown; step: unknown; chunk: unknown };
  if (!Number.isSafeInteger(turn) || !Number.isSafeInteger(step) || !Object.isFrozen(data)) return eventEntry;
  if (!hasExactKeys(chunk, deltaKeys)) return chunkEntry;
  const delta = chunk as { type: unknown; index: unknown; text: unknown };
  if (typeof delta.text !== 'string' || !Number.isSafeInteger(delta.index) || (delta.index as number) < 0)
    return chunkEntry;
  if (delta.type === 'text-delta') return textDeltaEntry;
  if (delta.type === 'reasoning-delta') return reasoningDeltaEntry;
  return chunkEntry;
}

/** True when `value` is an object whose own enumerable keys are exactly `keys`, in that order. */
function hasExactKeys(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  let position = 0;
  for (const key in value) {
    if (key !== keys[position]) return false;
    position++;
  }
  return position === keys.length;
}

function clampIndex(index: number, length: number): number {
  const integer = Math.trunc(index) || 0;
  if (integer < 0) return Math.max(0, integer + length);
  return Math.min(integer, length);
}
