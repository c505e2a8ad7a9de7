import type { SessionLogPrefix } from '../session-log.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { isKnownSessionEventType } from '../session-event.ts';
import { CompactLogCodec } from './compact-log-codec.ts';
import { compactKindTypes } from './compact-line-kinds.ts';
import { expandTypedLine } from './typed-log-line.ts';
import type { CompactLogResumeState } from './compact-log-state.ts';
import { isCount, isShape } from './compact-log-state.ts';
import { SessionCorruptError, checkEvent } from './session-log-format.ts';

const newline = 0x0a;
const openBracket = 0x5b;
const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const zero = 0x30;
const nine = 0x39;
// Type codes are bytes: a prefix with more distinct event types than this is not indexed.
const maxTypes = 256;
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

interface PrefixIndex {
  length: number;
  lineStarts: Float64Array | Uint32Array;
  codes: Uint8Array;
  types: string[];
  boundarySeqs: number[];
  boundaryStates: CompactLogResumeState[];
  /** Per boundary, the seq of the last reply before it (-1 for none); its `replySource` is not filled. */
  boundaryReplies: number[];
  endState: CompactLogResumeState;
  endReply: number;
  replyCode: number;
}

/**
 * One pass over the prefix's lines: each line's offset, type code and time, and the decoder state at
 * each turn or step start, tracked exactly as `CompactLogState.observe` tracks it. Only lines that
 * change that state beyond the time (replies, starts in the generic form) are parsed as JSON.
 */
function indexLines(source: LogPrefixSource, lines: number): PrefixIndex | string {
  const { bytes, end } = source;
  // Offsets fit 32 bits below 4 GiB: half the memory.
  const lineStarts = end < 2 ** 32 ? new Uint32Array(lines + 1) : new Float64Array(lines + 1);
  const codes = new Uint8Array(lines);
  const types: string[] = [];
  const codeOf = new Map<string, number>();
  const kindCodes: number[] = [];
  const intern = (type: string): number => {
    let code = codeOf.get(type);
    if (code === undefined) {
      code = types.length;
      types.push(type);
      codeOf.set(type, code);
    }
    return code;
  };
  // The generic form's type names met so far, as bytes: a line's name is matched against them without
  // making a string of it (most lines of a kind repeat a handful of names).
  const named: { name: Buffer; code: number }[] = [];
  const codeOfName = (from: number, to: number): number => {
    for (const { name, code } of named) if (sameBytes(bytes, from, to, name)) return code;
    const name = bytes.subarray(from, to);
    const code = intern(name.toString('utf8'));
    named.push({ name, code });
    return code;
  };
  for (const type of compactKindTypes) kindCodes.push(intern(type));
  const turnStart = intern('turn/start');
  const turnEnd = intern('turn/end');
  const stepStart = intern('step/start');
  const stepEnd = intern('step/end');
  const reply = intern('assistant/message');
  const boundarySeqs: number[] = [];
  const boundaryStates: CompactLogResumeState[] = [];
  let time = source.createdAt;
  let lastTurn = 0;
  let openTurn: number | undefined;
  let openStep: number | undefined;
  // The last reply before each boundary: its source (what a reply line may leave out) is read on demand.
  const boundaryReplies: number[] = [];
  let lastReply = -1;
  const state = (seq: number): CompactLogResumeState => ({
    seq,
    time,
    lastTurn,
    openTurn,
    openStep,
    replySource: '',
  });
  let start = source.start;
  for (let seq = 0; seq < lines; seq++) {
    const lineEnd = lineEndFrom(bytes, start, end);
    if (lineEnd < 0) return `${lines} lines expected, ${seq} found`;
    lineStarts[seq] = start;
    let code: number;
    let dt: number;
    let kind = -1;
    let absolute: number | undefined;
    let value: unknown;
    let position: number;
    if (bytes[start] === openBracket && bytes[start + 1]! >= zero && bytes[start + 1]! <= nine) {
      // `[kind,dt,…`: the kind names the type.
      kind = 0;
      for (position = start + 1; bytes[position]! >= zero && bytes[position]! <= nine; position++)
        kind = kind * 10 + bytes[position]! - zero;
      if (bytes[position] !== comma || kind >= compactKindTypes.length)
        return `line ${seq + 2}: an unknown kind`;
      code = kindCodes[kind]!;
      dt = readNumber(bytes, position + 1);
    } else if (bytes[start] === openBracket && bytes[start + 1] === quote) {
      // `["type",dt,…`: the type is the string (one without escapes, else the line is parsed).
      const close = positionOf(bytes, quote, start + 2, lineEnd);
      if (close < 0 || hasByte(bytes, backslash, start + 2, close)) {
        value = parse(bytes, start, lineEnd);
        if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'number')
          return `line ${seq + 2}: not a record`;
        code = intern(value[0]);
        dt = value[1];
      } else {
        code = codeOfName(start + 2, close);
        dt = bytes[close + 1] === comma ? readNumber(bytes, close + 2) : Number.NaN;
      }
    } else {
      // A full envelope, kept where the compact form could not hold the event.
      value = parse(bytes, start, lineEnd);
      if (checkEvent(value, seq) !== undefined) return `line ${seq + 2}: not a record`;
      const envelope = value as AnySessionEvent;
      code = intern(envelope.type);
      dt = 0;
      absolute = envelope.time;
    }
    if (!Number.isFinite(dt) || types.length > maxTypes) return `line ${seq + 2}: not indexable`;
    codes[seq] = code;
    if (code === turnStart || code === stepStart) {
      boundarySeqs.push(seq);
      boundaryStates.push(state(seq));
      boundaryReplies.push(lastReply);
    }
    time = absolute ?? time + dt;
    // The decoder state, as `CompactLogState.observe` moves it (the data of a compact start is implied).
    if (code === turnStart) {
      const turn =
        kind >= 0
          ? lastTurn + 1
          : (dataOf(value ?? parse(bytes, start, lineEnd)) as Record<string, unknown>)?.turn;
      if (isCount(turn)) {
        openTurn = turn;
        lastTurn = Math.max(lastTurn, turn);
      }
      openStep = undefined;
    } else if (code === turnEnd) {
      openTurn = undefined;
      openStep = undefined;
    } else if (code === stepStart) {
      const step =
        kind >= 0
          ? readNumber(bytes, afterComma(bytes, afterComma(bytes, start)))
          : (dataOf(value ?? parse(bytes, start, lineEnd)) as Record<string, unknown>)?.step;
      openStep = openTurn !== undefined && isCount(step) ? step : undefined;
    } else if (code === stepEnd) {
      openStep = undefined;
    } else if (code === reply) {
      lastReply = seq;
    }
    start = lineEnd + 1;
  }
  lineStarts[lines] = start;
  if (start !== end) return 'the prefix does not end at a line end';
  // A type this Rein does not know is refused or skipped by the full read, which says which and why.
  for (const type of types) if (!isKnownSessionEventType(type)) return `an unknown event type '${type}'`;
  const endState = state(lines);
  if (boundarySeqs[0] !== 0) {
    boundaryReplies.unshift(-1);
    boundarySeqs.unshift(0);
    boundaryStates.unshift({
      seq: 0,
      time: source.createdAt,
      lastTurn: 0,
      openTurn: undefined,
      openStep: undefined,
      replySource: '',
    });
  }
  return {
    length: lines,
    lineStarts,
    codes,
    types,
    boundarySeqs,
    boundaryStates,
    boundaryReplies,
    endState,
    endReply: lastReply,
    replyCode: reply,
  };
}

/**
 * The time of the event on the line from `start` to `end`, given the time of the one before it (as the
 * decoder computes it: the previous time plus the line's delta, or a full envelope's own time).
 */
function timeAfter(bytes: Buffer, start: number, end: number, previous: number): number | undefined {
  if (bytes[start] === openBracket && bytes[start + 1]! >= zero && bytes[start + 1]! <= nine) {
    const dt = readNumber(bytes, afterComma(bytes, start));
    return Number.isFinite(dt) ? previous + dt : undefined;
  }
  if (bytes[start] === openBracket && bytes[start + 1] === quote) {
    const close = bytes.indexOf(quote, start + 2);
    if (
      close > 0 &&
      close < end &&
      !hasByte(bytes, backslash, start + 2, close) &&
      bytes[close + 1] === comma
    ) {
      const dt = readNumber(bytes, close + 2);
      if (Number.isFinite(dt)) return previous + dt;
    }
  }
  const value = parse(bytes, start, end);
  if (Array.isArray(value)) return typeof value[1] === 'number' ? previous + value[1] : undefined;
  const time = isShape(value) ? value.time : undefined;
  return typeof time === 'number' ? time : undefined;
}

/** Where the line starting at `start` ends (its newline), or -1 when no newline comes before `end`. */
function lineEndFrom(bytes: Buffer, start: number, end: number): number {
  // Most lines are short: a plain loop finds their end faster than a call into Buffer.indexOf.
  const near = Math.min(end, start + 96);
  for (let at = start; at < near; at++) if (bytes[at] === newline) return at;
  if (near === end) return -1;
  const at = bytes.indexOf(newline, near);
  return at >= 0 && at < end ? at : -1;
}

/** True when `byte` occurs in `bytes` from `start` up to `end`. */
function hasByte(bytes: Buffer, byte: number, start: number, end: number): boolean {
  for (let at = start; at < end; at++) if (bytes[at] === byte) return true;
  return false;
}

/** The data of a parsed line: the third member of a compact line, `data` of an envelope. */
function dataOf(line: unknown): unknown {
  if (Array.isArray(line)) return line[2];
  return isShape(line) ? line.data : undefined;
}

function parse(bytes: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(bytes.toString('utf8', start, end));
  } catch {
    return undefined;
  }
}

/** The position just after the next comma from `position` (0 when there is none). */
function afterComma(bytes: Buffer, position: number): number {
  // A plain loop: the comma is a few bytes away, nearer than a call into Buffer.indexOf pays off.
  for (let at = position; at < bytes.length; at++) if (bytes[at] === comma) return at + 1;
  return 0;
}

/** The position of the first `byte` in `bytes` from `start` up to `end`, or -1. */
function positionOf(bytes: Buffer, byte: number, start: number, end: number): number {
  for (let at = start; at < end; at++) if (bytes[at] === byte) return at;
  return -1;
}

/** True when `bytes` from `start` up to `end` are exactly `name`. */
function sameBytes(bytes: Buffer, start: number, end: number, name: Buffer): boolean {
  if (end - start !== name.length) return false;
  for (let at = 0; at < name.length; at++) if (bytes[start + at] !== name[at]) return false;
  return true;
}

/** The JSON number starting at `position` (up to a comma or bracket); NaN when there is none. */
function readNumber(bytes: Buffer, position: number): number {
  let value = 0;
  let at = position;
  for (; bytes[at]! >= zero && bytes[at]! <= nine; at++) value = value * 10 + bytes[at]! - zero;
  const next = bytes[at];
  if (at > position && (next === comma || next === 0x5d)) return value;
  // Signs, fractions and exponents are rare (times are integers): the text goes through Number.
  let stop = at;
  while (stop < bytes.length && bytes[stop] !== comma && bytes[stop] !== 0x5d && bytes[stop] !== newline)
    stop++;
  const text = bytes.toString('latin1', position, stop);
  return text === '' ? Number.NaN : Number(text);
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
