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

// What an entry holds: the event itself; for a packed chunk event its chunk or its text; for a packed
// boundary event its turn (turn events) or turn and step as one number (step events).
const eventEntry = 0;
const chunkEntry = 1;
const textDeltaEntry = 2;
const reasoningDeltaEntry = 3;
const turnStartEntry = 4;
const stepStartEntry = 5;
const stepEndEntry = 6;
// A packed `turn/end` is this plus the index of its reason's kind in `turnEndKinds`.
const turnEndEntry = 7;
const turnEndKinds = ['completed', 'max-tokens', 'blocked', 'aborted', 'interrupted'] as const;
// A usage chunk keeps its usage object.
const usageEntry = turnEndEntry + turnEndKinds.length;
// A finish chunk whose reason is only a kind: this plus the kind's index in `finishKinds`.
const finishEntry = usageEntry + 1;
const finishKinds = ['stop', 'tool-calls', 'max-tokens'] as const;
// A block-start chunk keeps its block index: this plus the block type's index in `blockTypes`.
const blockStartEntry = finishEntry + finishKinds.length;
const blockTypes = ['text', 'reasoning', 'tool-call', 'image', 'tool-result'] as const;

const chunkEventType = 'assistant/chunk';
/** The event type of each packed kind. */
const typeOfKind: readonly string[] = [
  '',
  chunkEventType,
  chunkEventType,
  chunkEventType,
  'turn/start',
  'step/start',
  'step/end',
  ...turnEndKinds.map(() => 'turn/end'),
  chunkEventType,
  ...finishKinds.map(() => chunkEventType),
  ...blockTypes.map(() => chunkEventType),
];
const eventKeys = ['type', 'seq', 'time', 'data'] as const;
const chunkDataKeys = ['turn', 'step', 'chunk'] as const;
const deltaKeys = ['type', 'index', 'text'] as const;
const usageKeys = ['type', 'usage'] as const;
const finishKeys = ['type', 'reason'] as const;
const blockStartKeys = ['type', 'index', 'blockType'] as const;
const turnKeys = ['turn'] as const;
const stepKeys = ['turn', 'step'] as const;
const turnEndKeys = ['turn', 'reason'] as const;
const reasonKeys = ['kind'] as const;
// Turn and step of a packed step event share one small integer: turn × stepRange + step.
const stepRange = 1 << 16;
const maxPackedTurn = (1 << 14) - 1;
// Entries live in fixed-size pages, so a growing log never copies (or leaves behind) a large array.
const pageBits = 12;
const pageSize = 1 << pageBits;
const pageMask = pageSize - 1;
// A packed entry's kind and time share one number, time × kindRange + kind; an unpacked event has -1.
const kindRange = 32;
const maxPackedTime = 2 ** 48;

/**
 * The committed events of one session in seq order. Stream chunks and boundaries, the bulk of any log,
 * are stored packed when they have exactly the loop's shape: a chunk event keeps its chunk (a text or
 * reasoning delta only its text), a boundary event a small integer, each with its time, turn and step
 * of a run of chunks stored once; read, it is rebuilt as an equal, deep-frozen event. Every other
 * event is kept as the very object that was committed.
 */
export class SessionLog implements ReadonlySessionLog {
  readonly #entries: unknown[][] = [];
  // Per slot: -1 for an event kept as it is, else the packed kind and time. Plain arrays of numbers:
  // typed arrays cost an array buffer each (slow to create and to sweep, and kept off the V8 heap).
  readonly #meta: number[][] = [];
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

  /**
   * Adds the next event; its `seq` must equal `length` and it must be frozen (the caller checks both).
   * `bare` promises that the event has exactly type, seq, time and data (as `Session` builds it).
   */
  push(event: AnySessionEvent, bare = false): void {
    const seq = this.#length;
    const page = seq >>> pageBits;
    const slot = seq & pageMask;
    if (slot === 0) {
      // The first page grows as a short log does; later ones are allocated whole (no growth slack).
      this.#entries.push(page === 0 ? [] : new Array<unknown>(pageSize));
      this.#meta.push(page === 0 ? [] : new Array<number>(pageSize));
    }
    const time = event.time;
    const kind =
      Number.isSafeInteger(time) && time >= 0 && time < maxPackedTime
        ? packedKindOf(event, bare)
        : eventEntry;
    this.#length = seq + 1;
    if (kind === eventEntry) {
      this.#meta[page]![slot] = -1;
      this.#entries[page]![slot] = event;
      return;
    }
    this.#meta[page]![slot] = time * kindRange + kind;
    if (kind >= turnStartEntry && kind < usageEntry) {
      const { turn, step } = event.data as { turn: number; step: number };
      this.#entries[page]![slot] =
        kind === stepStartEntry || kind === stepEndEntry ? turn * stepRange + step : turn;
      return;
    }
    const data = event.data as {
      turn: number;
      step: number;
      chunk: { index?: number; text?: string; usage?: unknown };
    };
    const delta = kind === textDeltaEntry || kind === reasoningDeltaEntry;
    const index = delta ? data.chunk.index! : -1;
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
    this.#entries[page]![slot] = delta
      ? data.chunk.text
      : kind === usageEntry
        ? data.chunk.usage
        : kind >= blockStartEntry
          ? data.chunk.index
          : kind >= finishEntry
            ? 0
            : data.chunk;
  }

  /** The event with this seq (negative counts from the end, as `Array.prototype.at`), or undefined. */
  at(seq: number): AnySessionEvent | undefined {
    const position = this.#positionOf(seq);
    if (position < 0) return undefined;
    const page = position >>> pageBits;
    const slot = position & pageMask;
    const entry = this.#entries[page]![slot];
    const meta = this.#meta[page]![slot]!;
    if (meta < 0) return entry as AnySessionEvent;
    const kind = meta % kindRange;
    return this.#rebuild(position, kind, entry, (meta - kind) / kindRange);
  }

  /** The type of the event with this seq without building the event, or undefined. */
  typeAt(seq: number): string | undefined {
    const position = this.#positionOf(seq);
    if (position < 0) return undefined;
    const page = position >>> pageBits;
    const slot = position & pageMask;
    const meta = this.#meta[page]![slot]!;
    if (meta < 0) return (this.#entries[page]![slot] as AnySessionEvent).type;
    const kind = meta % kindRange;
    return typeOfKind[kind];
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

  /** The position of a seq (negative counts from the end), or -1 when there is no such event. */
  #positionOf(seq: number): number {
    const position = seq < 0 ? seq + this.#length : seq;
    return position >= 0 && position < this.#length ? position : -1;
  }

  #rebuild(seq: number, kind: number, entry: unknown, time: number): AnySessionEvent {
    if (kind >= turnStartEntry && kind < usageEntry) return rebuildBoundary(seq, kind, entry as number, time);
    const run = this.#runOf(seq);
    const chunk = rebuildChunk(kind, entry, this.#runIndexes[run]!);
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
}

/** A boundary event from its packed entry. */
function rebuildBoundary(seq: number, kind: number, entry: number, time: number): AnySessionEvent {
  if (kind === turnStartEntry) {
    return Object.freeze({ type: 'turn/start', seq, time, data: Object.freeze({ turn: entry }) });
  }
  if (kind >= turnEndEntry) {
    const reason = Object.freeze({ kind: turnEndKinds[kind - turnEndEntry]! });
    return Object.freeze({ type: 'turn/end', seq, time, data: Object.freeze({ turn: entry, reason }) });
  }
  const turn = Math.floor(entry / stepRange);
  const data = Object.freeze({ turn, step: entry - turn * stepRange });
  return Object.freeze({ type: typeOfKind[kind]!, seq, time, data });
}

/** A chunk from its packed entry (`index` is the run's block index, used by deltas). */
function rebuildChunk(kind: number, entry: unknown, index: number): unknown {
  if (kind === chunkEntry) return entry;
  if (kind === textDeltaEntry || kind === reasoningDeltaEntry) {
    const type = kind === textDeltaEntry ? 'text-delta' : 'reasoning-delta';
    return Object.freeze({ type, index, text: entry as string });
  }
  if (kind === usageEntry) return Object.freeze({ type: 'usage', usage: entry });
  if (kind >= blockStartEntry) {
    const blockType = blockTypes[kind - blockStartEntry]!;
    return Object.freeze({ type: 'block-start', index: entry as number, blockType });
  }
  return Object.freeze({ type: 'finish', reason: Object.freeze({ kind: finishKinds[kind - finishEntry]! }) });
}

/**
 * How an event can be stored: chunk and boundary events of exactly the shapes the loop commits are
 * packed; anything else (extra members, flags, other orders, odd values) is kept as it is.
 */
function packedKindOf(event: AnySessionEvent, bare: boolean): number {
  const type = event.type;
  if (type === chunkEventType)
    return bare || hasExactKeys(event, eventKeys) ? chunkKindOf(event.data) : eventEntry;
  if (type !== 'turn/start' && type !== 'step/start' && type !== 'step/end' && type !== 'turn/end')
    return eventEntry;
  if (!bare && !hasExactKeys(event, eventKeys)) return eventEntry;
  const data = event.data as { turn?: unknown; step?: unknown; reason?: unknown };
  if (!Object.isFrozen(data) || !isPackedTurn(data.turn)) return eventEntry;
  switch (type) {
    case 'turn/start':
      return hasExactKeys(data, turnKeys) ? turnStartEntry : eventEntry;
    case 'turn/end': {
      const reason = data.reason as { kind?: unknown } | undefined;
      if (!hasExactKeys(data, turnEndKeys) || !hasExactKeys(reason, reasonKeys) || !Object.isFrozen(reason))
        return eventEntry;
      const index = turnEndKinds.indexOf(reason!.kind as (typeof turnEndKinds)[number]);
      return index < 0 ? eventEntry : turnEndEntry + index;
    }
    default: {
      const step = data.step;
      if (!hasExactKeys(data, stepKeys) || !Number.isSafeInteger(step)) return eventEntry;
      if ((step as number) < 0 || (step as number) >= stepRange) return eventEntry;
      return type === 'step/start' ? stepStartEntry : stepEndEntry;
    }
  }
}

/** True for a turn number a packed entry can hold (a small integer). */
function isPackedTurn(turn: unknown): boolean {
  return Number.isSafeInteger(turn) && (turn as number) >= 0 && (turn as number) <= maxPackedTurn;
}

/** How a chunk event's data can be stored. */
function chunkKindOf(data: unknown): number {
  if (!hasExactKeys(data, chunkDataKeys)) return eventEntry;
  const { turn, step, chunk } = data as { turn: unknown; step: unknown; chunk: unknown };
  if (!Number.isSafeInteger(turn) || !Number.isSafeInteger(step) || !Object.isFrozen(data)) return eventEntry;
  const fields = chunk as {
    type?: unknown;
    index?: unknown;
    text?: unknown;
    usage?: unknown;
    reason?: unknown;
  };
  switch (fields?.type) {
    case 'text-delta':
    case 'reasoning-delta':
      if (!hasExactKeys(chunk, deltaKeys) || typeof fields.text !== 'string' || !isBlockIndex(fields.index))
        return chunkEntry;
      return fields.type === 'text-delta' ? textDeltaEntry : reasoningDeltaEntry;
    case 'usage':
      return hasExactKeys(chunk, usageKeys) && isFrozenObject(fields.usage) ? usageEntry : chunkEntry;
    case 'finish': {
      const reason = fields.reason as { kind?: unknown } | undefined;
      if (!hasExactKeys(chunk, finishKeys) || !hasExactKeys(reason, reasonKeys) || !Object.isFrozen(reason))
        return chunkEntry;
      const position = finishKinds.indexOf(reason!.kind as (typeof finishKinds)[number]);
      return position < 0 ? chunkEntry : finishEntry + position;
    }
    case 'block-start': {
      const blockType = (chunk as { blockType?: unknown }).blockType;
      if (!hasExactKeys(chunk, blockStartKeys) || !isBlockIndex(fields.index)) return chunkEntry;
      const position = blockTypes.indexOf(blockType as (typeof blockTypes)[number]);
      return position < 0 ? chunkEntry : blockStartEntry + position;
    }
    default:
      return chunkEntry;
  }
}

/** True for a block index a packed entry can hold (a small non-negative integer). */
function isBlockIndex(index: unknown): boolean {
  return Number.isSafeInteger(index) && (index as number) >= 0 && (index as number) < 2 ** 30;
}

function isFrozenObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.isFrozen(value);
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
