import {
  assistantMessageEntry,
  assistantReplyEntry,
  blockEndEntry,
  chunkEventType,
  entryOf,
  eventEntry,
  isFrozenObject,
  isReplyShape,
  jsonEqual,
  kindCount,
  packedKindOf,
  reasoningDeltaEntry,
  rebuildChunk,
  rebuildStandalone,
  textDeltaEntry,
  typeOfKind,
  usageEntry,
  userMessageEntry,
} from './packed-event.ts';
import type { AnySessionEvent } from './session-event.ts';

/** Read access to a session's committed events, in seq order. */
export interface ReadonlySessionLog extends Iterable<AnySessionEvent> {
  /** The number of events, which is also the next seq. */
  readonly length: number;
  /** The event with this seq (negative counts from the end, as `Array.prototype.at`), or undefined. */
  at(seq: number): AnySessionEvent | undefined;
  /** The type of the event with this seq without building the event, or undefined. */
  typeAt(seq: number): string | undefined;
  /** The data of the event with this seq, without building the rest of the event, or undefined. */
  dataAt(seq: number): unknown;
  /** The events from `start` up to but excluding `end` as a fresh array (negative counts from the end). */
  slice(start?: number, end?: number): AnySessionEvent[];
  /** The seq of the first event at or after `from` whose type is in `types`, or -1; skips the others unbuilt. */
  nextOfType(types: ReadonlySet<string>, from: number): number;
  /** The seq of the last event before `before` whose type is in `types`, or -1; skips the others unbuilt. */
  previousOfType(types: ReadonlySet<string>, before: number): number;
}

/**
 * Events a log holds before its first pushed one, read on demand: the prefix a resumed session did not
 * load (seqs 0 to `length` - 1). Its reads return equal, deep-frozen events; they throw a typed
 * SessionError when the stored prefix cannot be read.
 */
export interface SessionLogPrefix {
  /** The number of events in the prefix. */
  readonly length: number;
  /** The event with this seq (0 ≤ seq < length). */
  at(seq: number): AnySessionEvent;
  /** The type of the event with this seq (0 ≤ seq < length), without building the event. */
  typeAt(seq: number): string;
  /** The first seq at or after `from` (≥ 0) with a type in `types`, or -1. */
  nextOfType(types: ReadonlySet<string>, from: number): number;
  /** The last seq before `before` (≤ length) with a type in `types`, or -1. */
  previousOfType(types: ReadonlySet<string>, before: number): number;
}

// Entries live in fixed-size pages, so a growing log never copies (or leaves behind) a large array.
const pageBits = 12;
const pageSize = 1 << pageBits;
const pageMask = pageSize - 1;
// A packed entry's kind and time share one number, time × kindRange + kind; an event kept as it is has
// -1. An event not judged yet (the first page is not full) is held as committed with a number at or
// below heldMeta that keeps what `push` was told: heldMeta - (knownKind + 1) × 2 - (bare ? 1 : 0).
const kindRange = 32;
if (kindCount > kindRange) throw new Error('session log: more packed kinds than kindRange holds');
const maxPackedTime = 2 ** 48;
const heldMeta = -2;
// Which kinds are chunk events (and so belong to a run), as a table: this is read once per chunk.
const chunkKinds: readonly boolean[] = typeOfKind.map((type) => type === chunkEventType);

/**
 * An entries page of length `length`, already in the holey elements kind of any value. Every page, the
 * first included, then has one elements kind from the start: a page that began as small integers would
 * change kind at its first store, and code optimized on the first page would be deoptimized (wrong map)
 * on the second.
 */
function entriesPage(length: number): unknown[] {
  // Its own `new Array` site, apart from `metaPage`'s: V8 allocates each site's later arrays in the
  // most general kind that site has seen, so one shared site would start meta pages as generic
  // elements once entries pages were made there (every packed meta then a boxed number, and the
  // code optimized on double pages deoptimized; bench/README.md, item 5, fourteenth round).
  const page = new Array<unknown>(Math.max(1, length));
  page[0] = undefined;
  // The slot is written again before it is read, and a first page starts empty.
  if (length === 0) page.length = 0;
  return page;
}

/**
 * A meta page of length `length`, already holey doubles (packed meta, time × kindRange + kind, is no
 * small integer), as `entriesPage` is for entries.
 */
function metaPage(length: number): number[] {
  const page = new Array<number>(Math.max(1, length));
  page[0] = 0.5;
  if (length === 0) page.length = 0;
  return page;
}

// Set by `SessionLog`'s static block: packs whatever the first page still holds (see `packHeldEvents`).
let sealFirstPage: (log: SessionLog) => void;

/**
 * Packs every event `log` still holds as committed, as the log does with its first page once that is
 * full: for tests of the packed forms, which a log shorter than a page never reaches on its own.
 */
export function packHeldEvents(log: SessionLog): void {
  sealFirstPage(log);
}

/**
 * The committed events of one session in seq order. Events of exactly the shapes the loop commits are
 * stored packed: a log's first page of 4,096 events once it is full, every later event as it comes. A
 * log shorter than a page so keeps its events as committed (judging and packing each event as it came
 * was about a fifth of a short run's step; bench/README.md, item 5, eighth round), and a long one keeps
 * no more than a page-sized log would. Packed, a chunk keeps its text, usage, block or nothing, a
 * boundary a small integer, a message event its message, an inbox splice its message or count, each
 * with its time, and turn and step of a run of chunks stored once; read, it is rebuilt as an equal,
 * deep-frozen event (sharing the stored message, usage and block objects). Every other event is kept
 * as the very object that was committed.
 */
export class SessionLog implements ReadonlySessionLog {
  // Seqs below #base live in #prefix; entries, meta and pages are addressed by seq - #base.
  readonly #prefix: SessionLogPrefix | undefined;
  readonly #base: number;
  readonly #entries: unknown[][] = [];
  // Per slot: -1 for an event kept as it is, at most heldMeta for one held until the first page is
  // full, else the packed kind and time. Plain arrays of numbers: typed arrays cost an array buffer
  // each (slow to create and to sweep, and kept off the V8 heap).
  readonly #meta: number[][] = [];
  #length = 0;
  // Runs of packed chunks sharing turn, step and (for deltas and block ends) block index, as parallel arrays.
  readonly #runStarts: number[] = [];
  readonly #runTurns: number[] = [];
  readonly #runSteps: number[] = [];
  readonly #runIndexes: number[] = [];
  // The unbroken run of chunk events ending at the last event (-1 when it is no chunk event): where it
  // starts, its packed block ends and its last packed usage, so an assistant message is packed in O(1).
  #chunkRunFrom = -1;
  readonly #chunkRunBlockEnds: number[] = [];
  #chunkRunUsage = -1;
  // Each packed assistant message's seq and the first seq of its sources, ascending, for its rebuild.
  readonly #messageSeqs: number[] = [];
  readonly #messageSourceStarts: number[] = [];

  static {
    sealFirstPage = (log) => log.#sealFirstPage();
  }

  /** A log that starts after `prefix` (its events are read from it on demand), or empty. */
  constructor(prefix?: SessionLogPrefix) {
    this.#prefix = prefix;
    this.#base = prefix?.length ?? 0;
    this.#length = this.#base;
  }

  /** The number of events, which is also the next seq. */
  get length(): number {
    return this.#length;
  }

  /**
   * Adds the next event; its `seq` must equal `length` and it must be frozen (the caller checks both).
   * `bare` promises that the event has exactly type, seq, time and data (as `Session` builds it);
   * `knownKind`, when not -1, is the kind `packedKindOf` would give it, already known to the caller.
   * In the first page an event is held as committed until the page is full, then judged and packed
   * with it; later events are judged and packed at once. Returns the kind the event was judged to have,
   * or for a held one `knownKind` when it can be stored with that kind (`eventEntry` when the event was
   * not judged, or cannot be packed), which a persistence sink may rely on instead of judging the
   * event's shape again.
   */
  push(event: AnySessionEvent, bare = false, knownKind = -1): number {
    const seq = this.#length;
    const position = seq - this.#base;
    const page = position >>> pageBits;
    const slot = position & pageMask;
    // A call, not inline code: it runs once (at seq 0) before `push` is optimized, so the optimized
    // `push` has feedback for it and is not deoptimized when the second page starts.
    if (slot === 0) this.#startPage(page);
    this.#length = seq + 1;
    // Past its first page a log packs each event as it comes: in a long stream the committed objects
    // then die young, where holding a page of them would carry it through several collections.
    if (page > 0) return this.#pack(event, seq, bare, knownKind);
    this.#meta[page]![slot] = heldMeta - (knownKind + 1) * 2 - (bare ? 1 : 0);
    this.#entries[page]![slot] = event;
    const time = event.time;
    return knownKind >= 0 && Number.isSafeInteger(time) && time >= 0 && time < maxPackedTime
      ? knownKind
      : eventEntry;
  }

  /** Allocates page `page`; when it is the second, the first page's held events are packed first. */
  #startPage(page: number): void {
    if (page === 1) this.#sealFirstPage();
    // The first page grows as a short log does; later ones are allocated whole (no growth slack).
    const length = page === 0 ? 0 : pageSize;
    this.#entries.push(entriesPage(length));
    this.#meta.push(metaPage(length));
  }

  /**
   * Packs the events of the first page that are still held as committed, in seq order, exactly as
   * they would have been packed one by one: each judgement reads only the events before it (the chunk
   * run before a message, the runs before a chunk), and those are packed first.
   */
  #sealFirstPage(): void {
    // The first page grows with the log: it is as long as the events it holds.
    const meta = this.#meta[0];
    if (meta === undefined) return;
    const entries = this.#entries[0]!;
    for (let slot = 0; slot < meta.length; slot++) {
      const held = meta[slot]!;
      if (held > heldMeta) continue;
      const said = heldMeta - held;
      this.#pack(entries[slot] as AnySessionEvent, this.#base + slot, said % 2 === 1, (said >> 1) - 1);
    }
  }

  /** Judges and stores one event in its slot (see `push` for `bare` and `knownKind`); returns its kind. */
  #pack(event: AnySessionEvent, seq: number, bare: boolean, knownKind: number): number {
    const time = event.time;
    const kind =
      Number.isSafeInteger(time) && time >= 0 && time < maxPackedTime
        ? knownKind >= 0
          ? knownKind
          : packedKindOf(event, bare)
        : eventEntry;
    // Deltas, the bulk of a log, take the shortest path.
    if (kind === textDeltaEntry || kind === reasoningDeltaEntry) {
      const position = seq - this.#base;
      const page = position >>> pageBits;
      const slot = position & pageMask;
      const data = event.data as { turn: number; step: number; chunk: { index: number; text: string } };
      this.#meta[page]![slot] = time * kindRange + kind;
      this.#entries[page]![slot] = data.chunk.text;
      if (this.#chunkRunFrom < 0) this.#startChunkRun(seq);
      this.#extendRuns(seq, data.turn, data.step, data.chunk.index);
      return kind;
    }
    this.#pushOther(event, seq, kind, time * kindRange);
    return kind;
  }

  /** `push` for every kind but deltas; `timeBase` is the event's time × kindRange. */
  #pushOther(event: AnySessionEvent, seq: number, packedKind: number, timeBase: number): void {
    const position = seq - this.#base;
    const page = position >>> pageBits;
    const slot = position & pageMask;
    let kind = packedKind;
    if (kind === assistantMessageEntry) {
      kind = this.#assistantMessageKind(seq, event);
      if (kind !== eventEntry) {
        this.#messageSeqs.push(seq);
        this.#messageSourceStarts.push(seq - event.sourceEventSeqs!.length);
      }
    }
    if (event.type !== chunkEventType) this.#chunkRunFrom = -1;
    else if (this.#chunkRunFrom < 0) this.#startChunkRun(seq);
    if (kind === eventEntry) {
      this.#meta[page]![slot] = -1;
      this.#entries[page]![slot] = event;
      return;
    }
    this.#meta[page]![slot] = timeBase + kind;
    this.#entries[page]![slot] = entryOf(event, kind);
    if (!chunkKinds[kind]) return;
    if (kind === blockEndEntry) this.#chunkRunBlockEnds.push(seq);
    else if (kind === usageEntry) this.#chunkRunUsage = seq;
    const data = event.data as { turn: number; step: number; chunk: { index: number } };
    this.#extendRuns(seq, data.turn, data.step, kind === blockEndEntry ? data.chunk.index : -1);
  }

  #startChunkRun(seq: number): void {
    this.#chunkRunFrom = seq;
    this.#chunkRunBlockEnds.length = 0;
    this.#chunkRunUsage = -1;
  }

  /**
   * Starts a new run unless the last one has this turn, step and (unless -1) block index; a last run
   * without a block index so far (no delta or block end in it) takes this one.
   */
  #extendRuns(seq: number, turn: number, step: number, index: number): void {
    const runs = this.#runStarts.length - 1;
    if (runs >= 0 && this.#runTurns[runs] === turn && this.#runSteps[runs] === step) {
      const runIndex = this.#runIndexes[runs];
      if (index === -1 || runIndex === index) return;
      if (runIndex === -1) {
        this.#runIndexes[runs] = index;
        return;
      }
    }
    this.#runStarts.push(seq);
    this.#runTurns.push(turn);
    this.#runSteps.push(step);
    this.#runIndexes.push(index);
  }

  /** The event with this seq (negative counts from the end, as `Array.prototype.at`), or undefined. */
  at(seq: number): AnySessionEvent | undefined {
    const position = this.#positionOf(seq);
    if (position < 0) return undefined;
    if (position < this.#base) return this.#prefix!.at(position);
    const local = position - this.#base;
    const page = local >>> pageBits;
    const slot = local & pageMask;
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
    if (position < this.#base) return this.#prefix!.typeAt(position);
    const local = position - this.#base;
    const page = local >>> pageBits;
    const slot = local & pageMask;
    const meta = this.#meta[page]![slot]!;
    if (meta < 0) return (this.#entries[page]![slot] as AnySessionEvent).type;
    return typeOfKind[meta % kindRange];
  }

  /** The data of the event with this seq, without building the rest of the event, or undefined. */
  dataAt(seq: number): unknown {
    const position = this.#positionOf(seq);
    if (position < 0) return undefined;
    if (position < this.#base) return this.#prefix!.at(position).data;
    const kind = this.#kindAt(position);
    if (kind === userMessageEntry || kind === assistantMessageEntry) return this.#entryAt(position);
    if (kind === assistantReplyEntry)
      return this.#replyData(position, this.#sourceStartOf(position), this.#entryAt(position));
    return this.at(position)!.data;
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

  /** The seq of the first event at or after `from` whose type is in `types`, or -1; skips the others unbuilt. */
  nextOfType(types: ReadonlySet<string>, from: number): number {
    let seq = Math.max(0, Math.trunc(from) || 0);
    if (seq < this.#base) {
      const found = this.#prefix!.nextOfType(types, seq);
      if (found >= 0) return found;
      seq = this.#base;
    }
    for (; seq < this.#length; seq++) if (types.has(this.typeAt(seq)!)) return seq;
    return -1;
  }

  /** The seq of the last event before `before` whose type is in `types`, or -1; skips the others unbuilt. */
  previousOfType(types: ReadonlySet<string>, before: number): number {
    let seq = Math.min(this.#length, Math.trunc(before) || 0) - 1;
    for (; seq >= this.#base; seq--) if (types.has(this.typeAt(seq)!)) return seq;
    return seq >= 0 ? this.#prefix!.previousOfType(types, seq + 1) : -1;
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
    if (kind === assistantMessageEntry || kind === assistantReplyEntry)
      return this.#rebuildAssistantMessage(seq, kind, entry, time);
    if (!chunkKinds[kind]) return rebuildStandalone(seq, kind, entry, time);
    const run = this.#runOf(seq);
    const chunk = rebuildChunk(kind, entry, this.#runIndexes[run]!);
    const data = Object.freeze({ turn: this.#runTurns[run]!, step: this.#runSteps[run]!, chunk });
    return Object.freeze({ type: chunkEventType, seq, time, data });
  }

  #rebuildAssistantMessage(seq: number, kind: number, entry: unknown, time: number): AnySessionEvent {
    const start = this.#sourceStartOf(seq);
    const sources = new Array<number>(seq - start);
    for (let position = 0; position < sources.length; position++) sources[position] = start + position;
    const sourceEventSeqs = Object.freeze(sources);
    const data = kind === assistantReplyEntry ? this.#replyData(seq, start, entry) : entry;
    return Object.freeze({
      type: 'assistant/message',
      seq,
      time,
      data,
      surfaceOp: 'append',
      sourceEventSeqs,
    });
  }

  /** The first source of a packed assistant message. */
  #sourceStartOf(seq: number): number {
    return this.#messageSourceStarts[lastAtOrBefore(this.#messageSeqs, seq)]!;
  }

  /** A packed reply's data: turn and step of its chunk run, its message, the run's last usage if any. */
  #replyData(seq: number, start: number, message: unknown): unknown {
    const run = this.#runOf(seq - 1);
    const turn = this.#runTurns[run]!;
    const step = this.#runSteps[run]!;
    const usage = this.#lastUsage(start, seq);
    return Object.freeze(usage === undefined ? { turn, step, message } : { turn, step, message, usage });
  }

  /**
   * How an `assistant/message` shaped for packing is stored, given what precedes it: unpacked unless its
   * sources are exactly the chunk run before it; only its message when the run gives the rest exactly.
   * A block-end block of that run equal to one of the message's blocks is swapped for the message's
   * (equal, frozen) block, so the two are kept once.
   */
  #assistantMessageKind(seq: number, event: AnySessionEvent): number {
    const sources = event.sourceEventSeqs!;
    if (!Array.isArray(sources) || !Object.isFrozen(sources)) return eventEntry;
    const start = this.#chunkRunFrom < 0 ? seq : this.#chunkRunFrom;
    if (sources.length !== seq - start) return eventEntry;
    for (let position = 0; position < sources.length; position++)
      if (sources[position] !== start + position) return eventEntry;
    const data = event.data as {
      turn?: unknown;
      step?: unknown;
      message?: { content?: unknown };
      usage?: unknown;
    };
    this.#shareBlocks(data.message?.content);
    if (start === seq || !isReplyShape(data) || this.#kindAt(seq - 1) === eventEntry)
      return assistantMessageEntry;
    const run = this.#runOf(seq - 1);
    if (this.#runTurns[run] !== data.turn || this.#runSteps[run] !== data.step) return assistantMessageEntry;
    const usage = this.#chunkRunUsage < 0 ? undefined : this.#entryAt(this.#chunkRunUsage);
    const same = usage === undefined ? !('usage' in data) : 'usage' in data && jsonEqual(data.usage, usage);
    return same ? assistantReplyEntry : assistantMessageEntry;
  }

  /** Points each packed block end of the current chunk run that equals a block of `content` at that block. */
  #shareBlocks(content: unknown): void {
    if (!Array.isArray(content)) return;
    for (const seq of this.#chunkRunBlockEnds) {
      const position = seq - this.#base;
      const page = position >>> pageBits;
      const slot = position & pageMask;
      const block = this.#entries[page]![slot];
      for (const candidate of content as unknown[]) {
        if (candidate !== block && isFrozenObject(candidate) && jsonEqual(candidate, block)) {
          this.#entries[page]![slot] = candidate;
          break;
        }
      }
    }
  }

  #entryAt(seq: number): unknown {
    const position = seq - this.#base;
    return this.#entries[position >>> pageBits]![position & pageMask];
  }

  /** The usage object of the last packed usage chunk among seqs `start` to `end`, if any. */
  #lastUsage(start: number, end: number): unknown {
    for (let seq = end - 1; seq >= start; seq--)
      if (this.#kindAt(seq) === usageEntry) return this.#entryAt(seq);
    return undefined;
  }

  /** The packed kind of an existing seq (`eventEntry` for an event kept as it is). */
  #kindAt(seq: number): number {
    // A prefix event counts as unpacked: nothing packed after the prefix refers into it.
    if (seq < this.#base) return eventEntry;
    const position = seq - this.#base;
    const meta = this.#meta[position >>> pageBits]![position & pageMask]!;
    return meta < 0 ? eventEntry : meta % kindRange;
  }

  /** The run holding a packed seq: the last run that starts at or before it. */
  #runOf(seq: number): number {
    return lastAtOrBefore(this.#runStarts, seq);
  }
}

/** The position of the last of ascending `values` at or before `value` (0 when none is). */
function lastAtOrBefore(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length - 1;
  // Reads cluster at the end of the log: try the last value before searching.
  if (values[high]! <= value) return high;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (values[middle]! <= value) low = middle;
    else high = middle - 1;
  }
  return low;
}

function clampIndex(index: number, length: number): number {
  const integer = Math.trunc(index) || 0;
  if (integer < 0) return Math.max(0, integer + length);
  return Math.min(integer, length);
}
