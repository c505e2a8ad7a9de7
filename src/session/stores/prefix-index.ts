import type { AnySessionEvent } from '../session-event.ts';
import { isKnownSessionEventType } from '../session-event.ts';
import { compactKindTypes } from './compact-line-kinds.ts';
import type { CompactLogResumeState } from './compact-log-state.ts';
import { isCount, isShape } from './compact-log-state.ts';
import type { LogPrefixSource } from './lazy-log-prefix.ts';
import { checkEvent } from './session-log-format.ts';

const newline = 0x0a;
/** The byte `[`: a compact or generic line starts with it, a full envelope does not. */
export const openBracket = 0x5b;
/** The byte `"`: just after `[`, it starts a generic line's type name. */
export const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const zero = 0x30;
const nine = 0x39;
// Type codes are bytes: a prefix with more distinct event types than this is not indexed.
const maxTypes = 256;

/** What `indexLines` finds: each line's start and type code, and the decoder's state at each boundary. */
export interface PrefixIndex {
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
export function indexLines(source: LogPrefixSource, lines: number): PrefixIndex | string {
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
export function timeAfter(bytes: Buffer, start: number, end: number, previous: number): number | undefined {
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
export function dataOf(line: unknown): unknown {
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
