import type { SessionLogPrefix } from '../session-log.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { CompactLogCodec } from './compact-log-codec.ts';
import { expandTypedLine } from './typed-log-line.ts';
import type { CompactLogResumeState } from './compact-log-state.ts';
import { isShape } from './compact-log-state.ts';
import { dataOf, indexLines, openBracket, quote, timeAfter } from './prefix-index.ts';
import type { PrefixIndex } from './prefix-index.ts';
import { SessionCorruptError, checkEvent } from './session-log-format.ts';

// Decoded events kept (whole stretches) for reads that come back to them: a surface walked twice.
const cachedEvents = 1 << 16;

/** Where a format 1 file's lines come from and how to name it in errors. */
export interface LogPrefixSource {
  id: string;
  path: string;
  createdAt: number;
  /** The file's bytes; only those before `end` are read. */
  bytes: Buffer;
  /** Where the first event line starts (just after the header line). */
  start: number;
  /** Where the prefix ends: the end of a complete line. */
  end: number;
}

/**
 * The events of a format 1 log prefix, read on demand from the file's bytes. One pass over the lines
 * at construction (`scan`) indexes each line's offset, type and time, and the decoder's state at every
 * `turn/start` and `step/start`; a read then decodes one line (a line in the generic form needs
 * nothing before it) or the stretch from the boundary before it, kept in a small cache. Events are
 * equal to those a full read builds, deep-frozen.
 */
export class LazyLogPrefix implements SessionLogPrefix {
  readonly length: number;
  readonly #source: LogPrefixSource;
  readonly #lineStarts: Float64Array | Uint32Array;
  readonly #codes: Uint8Array;
  readonly #types: readonly string[];
  // Decoder states at boundaries, by ascending seq (the first is the log's start).
  readonly #boundarySeqs: number[];
  readonly #boundaryStates: CompactLogResumeState[];
  readonly #boundaryReplies: number[];
  readonly #resolved: Uint8Array;
  readonly #replyCode: number;
  readonly #replySources = new Map<number, string>();
  readonly #segments = new Map<number, readonly AnySessionEvent[]>();
  // Events known without decoding their lines (a snapshot's surface events), by seq.
  readonly #kept = new Map<number, AnySessionEvent>();
  #cachedEvents = 0;
  readonly #positions = new Map<number, Int32Array>();
  readonly #endState: CompactLogResumeState;
  readonly #endReply: number;

  private constructor(source: LogPrefixSource, index: PrefixIndex) {
    this.#source = source;
    this.length = index.length;
    this.#lineStarts = index.lineStarts;
    this.#codes = index.codes;
    this.#types = index.types;
    this.#boundarySeqs = index.boundarySeqs;
    this.#boundaryStates = index.boundaryStates;
    this.#boundaryReplies = index.boundaryReplies;
    this.#resolved = new Uint8Array(index.boundarySeqs.length);
    this.#replyCode = index.replyCode;
    this.#endState = index.endState;
    this.#endReply = index.endReply;
  }

  /** The decoder's state after the prefix: where decoding the rest of the file goes on. */
  get endState(): CompactLogResumeState {
    return { ...this.#endState, replySource: this.#replySourceAfter(this.#endReply) };
  }

  /** The decoder state saved at a boundary, its reply source read on first use. */
  #stateAt(boundary: number): CompactLogResumeState {
    const state = this.#boundaryStates[boundary]!;
    if (this.#resolved[boundary] === 0) {
      state.replySource = this.#replySourceAfter(this.#boundaryReplies[boundary]!);
      this.#resolved[boundary] = 1;
    }
    return state;
  }

  /**
   * The decoder's reply source after the reply at `seq` (none for -1), as `CompactLogState` keeps it: a
   * reply line that leaves its source out has the one before it, so the walk goes back to one that has.
   */
  #replySourceAfter(seq: number): string {
    const known = this.#replySources.get(seq);
    if (known !== undefined) return known;
    let source = '';
    // Every reply passed on the way has the same source after it: remembered, so the next walk (from
    // the next boundary) stops at them instead of going back to the start again.
    const passed: number[] = [];
    for (let reply = seq; reply >= 0; reply--) {
      if (this.#codes[reply] !== this.#replyCode) continue;
      const before = this.#replySources.get(reply);
      if (before !== undefined) {
        source = before;
        break;
      }
      passed.push(reply);
      const line = this.#parseLine(reply);
      if (Array.isArray(line) && typeof line[0] === 'number') {
        const stated = Array.isArray(line[2]) ? (line[2] as unknown[])[1] : 0;
        if (stated === 0) continue;
        source = JSON.stringify(stated) ?? '';
        break;
      }
      const message = (dataOf(line) as Record<string, unknown> | undefined)?.message;
      if (!isShape(message)) continue;
      source = JSON.stringify(message.source) ?? '';
      break;
    }
    this.#replySources.set(seq, source);
    for (const reply of passed) this.#replySources.set(reply, source);
    return source;
  }

  /**
   * Indexes the lines of `source`, which must be exactly `lines` (one pass, no JSON parse of most lines);
   * a string says why they cannot be indexed (the caller then reads the log in full, which reports what
   * is wrong with it).
   */
  static scan(source: LogPrefixSource, lines: number): LazyLogPrefix | string {
    const index = indexLines(source, lines);
    return typeof index === 'string' ? index : new LazyLogPrefix(source, index);
  }

  /**
   * Serves these events (of the prefix, as a full read builds them: the caller vouches for that) from
   * memory instead of decoding their lines; they are deep-frozen here.
   */
  keep(events: readonly AnySessionEvent[]): void {
    for (const event of events) this.#kept.set(event.seq, canonicalEvent(event));
  }

  typeAt(seq: number): string {
    return this.#types[this.#codes[seq]!]!;
  }

  nextOfType(types: ReadonlySet<string>, from: number): number {
    let found = -1;
    for (const type of types) {
      const positions = this.#positionsOf(type);
      if (positions === undefined) continue;
      const index = firstAtOrAfter(positions, from);
      if (index < positions.length && (found < 0 || positions[index]! < found)) found = positions[index]!;
    }
    return found;
  }

  previousOfType(types: ReadonlySet<string>, before: number): number {
    let found = -1;
    for (const type of types) {
      const positions = this.#positionsOf(type);
      if (positions === undefined) continue;
      const index = firstAtOrAfter(positions, before) - 1;
      if (index >= 0 && positions[index]! > found) found = positions[index]!;
    }
    return found;
  }

  /** The ascending seqs of one type (built on first use: one pass over the type codes), if it occurs. */
  #positionsOf(type: string): Int32Array | undefined {
    const code = this.#types.indexOf(type);
    if (code < 0) return undefined;
    let positions = this.#positions.get(code);
    if (positions === undefined) {
      const codes = this.#codes;
      let count = 0;
      for (let seq = 0; seq < codes.length; seq++) if (codes[seq] === code) count++;
      positions = new Int32Array(count);
      for (let seq = 0, next = 0; seq < codes.length; seq++) if (codes[seq] === code) positions[next++] = seq;
      this.#positions.set(code, positions);
    }
    return positions;
  }

  at(seq: number): AnySessionEvent {
    const kept = this.#kept.get(seq);
    if (kept !== undefined) return kept;
    const boundary = lastAtOrBefore(this.#boundarySeqs, seq);
    const cached = this.#segments.get(boundary);
    if (cached !== undefined) return cached[seq - this.#boundarySeqs[boundary]!]!;
    const start = this.#lineStarts[seq]!;
    const bytes = this.#source.bytes;
    // A generic or full-envelope line stands alone: only its own line is decoded.
    if (bytes[start] !== openBracket || bytes[start + 1] === quote) {
      const value = this.#parseLine(seq);
      const event = Array.isArray(value)
        ? expandTypedLine(value, seq, this.#timeOf(seq, boundary))
        : (checkEvent(value, seq) ?? (value as AnySessionEvent));
      if (typeof event === 'string') throw this.#corrupt(seq, event);
      return canonicalEvent(event);
    }
    return this.#decodeSegment(boundary)[seq - this.#boundarySeqs[boundary]!]!;
  }

  /** The time of an event: its boundary's time plus the time deltas of the lines from there to it. */
  #timeOf(seq: number, boundary: number): number {
    const bytes = this.#source.bytes;
    let time = this.#boundaryStates[boundary]!.time;
    for (let line = this.#boundarySeqs[boundary]!; line <= seq; line++) {
      const start = this.#lineStarts[line]!;
      const moved = timeAfter(bytes, start, this.#lineStarts[line + 1]! - 1, time);
      if (moved === undefined) throw this.#corrupt(line, 'the record has no valid time');
      time = moved;
    }
    return time;
  }

  /** Decodes the lines from one boundary to the next with the decoder state saved there. */
  #decodeSegment(boundary: number): readonly AnySessionEvent[] {
    const first = this.#boundarySeqs[boundary]!;
    const end = this.#boundarySeqs[boundary + 1] ?? this.length;
    const codec = new CompactLogCodec(this.#source.createdAt, this.#stateAt(boundary));
    const events: AnySessionEvent[] = [];
    for (let seq = first; seq < end; seq++) {
      const event = codec.decode(this.#parseLine(seq), checkEvent);
      if (typeof event === 'string') throw this.#corrupt(seq, event);
      events.push(canonicalEvent(event));
    }
    // The oldest stretches go first once the cache holds more events than its budget.
    for (const [oldest, stretch] of this.#segments) {
      if (this.#cachedEvents + events.length <= cachedEvents) break;
      this.#segments.delete(oldest);
      this.#cachedEvents -= stretch.length;
    }
    this.#segments.set(boundary, events);
    this.#cachedEvents += events.length;
    return events;
  }

  #parseLine(seq: number): unknown {
    const start = this.#lineStarts[seq]!;
    const end = this.#lineStarts[seq + 1]! - 1;
    try {
      return JSON.parse(this.#source.bytes.toString('utf8', start, end));
    } catch {
      throw this.#corrupt(seq, 'the line is not valid JSON');
    }
  }

  #corrupt(seq: number, reason: string): SessionCorruptError {
    return new SessionCorruptError({
      id: this.#source.id,
      path: this.#source.path,
      line: seq + 2,
      offset: this.#lineStarts[seq]!,
      goodEvents: seq,
      reason,
    });
  }
}

/** The event with its members in the order `Session` builds them, deep-frozen. */
function canonicalEvent(event: AnySessionEvent): AnySessionEvent {
  const ordered: Record<string, unknown> = {
    type: event.type,
    seq: event.seq,
    time: event.time,
    data: deepFreeze(event.data),
  };
  if (event.ignorable === true) ordered.ignorable = true;
  if (event.surfaceOp !== undefined) ordered.surfaceOp = deepFreeze(event.surfaceOp);
  if (event.sourceEventSeqs !== undefined) ordered.sourceEventSeqs = deepFreeze(event.sourceEventSeqs);
  return Object.freeze(ordered) as unknown as AnySessionEvent;
}

function deepFreeze<Value>(value: Value): Value {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return Object.freeze(value);
}

/** The index of the first of ascending `values` at or after `value` (`values.length` when none is). */
function firstAtOrAfter(values: Int32Array, value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (values[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The position of the last of ascending `values` at or before `value` (0 when none is). */
function lastAtOrBefore(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (values[middle]! <= value) low = middle;
    else high = middle - 1;
  }
  return low;
}
