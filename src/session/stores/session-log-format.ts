import type { SessionHeader } from '../session.ts';
import { SessionError } from '../session-error.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { isKnownSessionEventType } from '../session-event.ts';
import { CompactLogCodec, fullEnvelopeEncoder } from './compact-log-codec.ts';
import type { SessionLineEncoder } from './compact-log-codec.ts';
import { LineBytes } from './line-bytes.ts';

/** The version of the in-memory session header (and of the event envelope), whatever the file format. */
export const sessionLogVersion = 0;
/** The file format new disk logs are written in: 1, compact lines (format 0, full envelopes, is still read). */
export const compactLogFormat = 1;
/** The file format of full-envelope lines: what older Rein versions wrote, exports and PostgreSQL rows hold. */
export const fullEnvelopeFormat = 0;
/** A session file format this code reads. */
export type SessionLogFormat = typeof fullEnvelopeFormat | typeof compactLogFormat;

/** A stored log that stops being readable before its tail; nothing was changed. */
export class SessionCorruptError extends SessionError {
  /** The 1-based line of the first bad record (the header is line 1). */
  readonly line: number;
  /** The byte offset where that line starts. */
  readonly offset: number;
  /** How many events precede the bad record (the good prefix a salvage fork keeps). */
  readonly goodEvents: number;
  constructor(options: {
    id: string;
    path: string;
    line: number;
    offset: number;
    goodEvents: number;
    reason: string;
  }) {
    super(
      'SESSION_CORRUPT',
      `session ${options.id} (${options.path}) is corrupt at line ${options.line}, byte offset ${options.offset}: ` +
        `${options.reason}. The file was not changed; fork a new session from the last good record ` +
        `(${options.goodEvents} events) with fork('${options.id}', { salvage: true }).`,
    );
    this.name = 'SessionCorruptError';
    this.line = options.line;
    this.offset = options.offset;
    this.goodEvents = options.goodEvents;
  }
}

/** A parsed session file. */
export interface ParsedSessionLog {
  header: SessionHeader;
  events: AnySessionEvent[];
  /** Bytes of complete records (header and events), i.e. where the next append goes. */
  completeBytes: number;
  /** Bytes of a torn final line (a crash mid-write), dropped. */
  tornBytes: number;
  /** Set only when parsing with `salvage`: where the log stopped being readable. */
  corrupt?: SessionCorruptError;
  /** The file format the header line names. */
  format: SessionLogFormat;
  /** Encodes the events that follow the parsed ones in the same format (appends after a resume). */
  encoder: SessionLineEncoder;
}

/** The header line of a session log in `format` (the in-memory header's `version` names the format). */
export function encodeHeaderLine(
  header: SessionHeader,
  format: SessionLogFormat = fullEnvelopeFormat,
): string {
  return `${JSON.stringify({ type: 'session', ...header, version: format })}\n`;
}

/** One event as its full-envelope JSONL line (format 0). */
export function encodeEventLine(event: AnySessionEvent): string {
  return `${JSON.stringify(event)}\n`;
}

/** The encoder of a new log in `format`, for a session created at `createdAt`. */
export function lineEncoder(format: SessionLogFormat, createdAt: number): SessionLineEncoder {
  return format === compactLogFormat ? new CompactLogCodec(createdAt) : fullEnvelopeEncoder;
}

/** A whole log (header and events) as text in `format`. */
export function encodeSessionLog(
  header: SessionHeader,
  events: Iterable<AnySessionEvent>,
  format: SessionLogFormat,
): string {
  const encoder = lineEncoder(format, header.createdAt);
  // The lines are written as bytes and made one text at the end, never one string each.
  const lines = new LineBytes(Number.POSITIVE_INFINITY);
  for (const event of events) encoder.encodeInto(lines, event);
  return encodeHeaderLine(header, format) + lines.text();
}

const newline = 0x0a;

/**
 * Parses a session file: the header line, then one event per line. A newline terminates (commits) a
 * record, so an unterminated final line is a torn write and is dropped. Any bad record before that is
 * refused with SessionCorruptError (or, with `salvage`, ends the log there); a foreign format version
 * or an unknown required event type is refused with `SESSION_VERSION`; nothing is modified.
 */
export function parseSessionLog(
  bytes: Buffer,
  context: { id: string; path: string; salvage?: boolean },
): ParsedSessionLog {
  const { header, format, headerEnd, completeBytes } = parseSessionLogHeader(bytes, context);
  const tornBytes = bytes.length - completeBytes;
  const codec = format === compactLogFormat ? new CompactLogCodec(header.createdAt) : undefined;
  const encoder = codec ?? fullEnvelopeEncoder;
  const lines = parseEventLines(bytes, {
    start: headerEnd + 1,
    end: completeBytes,
    codec,
    firstSeq: 0,
    firstLine: 2,
    context,
  });
  const parsed: ParsedSessionLog = {
    header,
    events: lines.events,
    completeBytes,
    tornBytes,
    format,
    encoder,
  };
  if (lines.corrupt !== undefined) parsed.corrupt = lines.corrupt;
  return parsed;
}

/** The header of a session file, where its line ends and how many bytes hold complete lines. */
export function parseSessionLogHeader(
  bytes: Buffer,
  context: { id: string; path: string },
): { header: SessionHeader; format: SessionLogFormat; headerEnd: number; completeBytes: number } {
  const completeBytes = bytes.lastIndexOf(newline) + 1;
  // Lines are decoded one at a time straight from the buffer: no copy of the whole file as one string,
  // and every line's byte offset is known exactly for error reports.
  const headerEnd = completeBytes === 0 ? -1 : bytes.indexOf(newline);
  if (headerEnd < 0) {
    throw new SessionError(
      'SESSION_CORRUPT',
      `${context.path} is not a Rein session log: it has no complete header line (${bytes.length} bytes)`,
    );
  }
  const { header, format } = parseHeader(bytes.toString('utf8', 0, headerEnd), context);
  return { header, format, headerEnd, completeBytes };
}

/**
 * The events of the complete lines from byte `start` to `end` (format 1 when `codec` is given, which
 * must stand where `start` is; else full envelopes), the first with seq `firstSeq` on line `firstLine`.
 * A bad record throws SessionCorruptError, or with `salvage` ends the events there (`corrupt`); an
 * unknown required event type throws `SESSION_VERSION`.
 */
export function parseEventLines(
  bytes: Buffer,
  options: {
    start: number;
    end: number;
    codec: CompactLogCodec | undefined;
    firstSeq: number;
    firstLine: number;
    context: { id: string; path: string; salvage?: boolean };
  },
): { events: AnySessionEvent[]; corrupt?: SessionCorruptError } {
  const { codec, context, firstSeq } = options;
  const events: AnySessionEvent[] = [];
  let line = options.firstLine - 1;
  for (let start = options.start; start < options.end;) {
    const end = bytes.indexOf(newline, start);
    line++;
    let problem: string | undefined;
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8', start, end));
    } catch {
      problem = 'the line is not valid JSON';
    }
    if (problem === undefined) {
      if (codec === undefined) {
        problem = checkEvent(value, firstSeq + events.length);
      } else {
        const decoded = codec.decode(value, checkEvent);
        if (typeof decoded === 'string') problem = decoded;
        else value = decoded;
      }
    }
    if (problem !== undefined) {
      const error = new SessionCorruptError({
        id: context.id,
        path: context.path,
        line,
        offset: start,
        goodEvents: firstSeq + events.length,
        reason: problem,
      });
      if (context.salvage === true) return { events, corrupt: error };
      throw error;
    }
    const event = value as AnySessionEvent;
    if (event.ignorable !== true && !isKnownSessionEventType(event.type)) {
      throw new SessionError(
        'SESSION_VERSION',
        `session ${context.id} (${context.path}) line ${line} holds a required event type ` +
          `'${event.type}' this Rein does not know (written by a newer version or a plugin that is not loaded)`,
      );
    }
    events.push(event);
    start = end + 1;
  }
  return { events };
}

function parseHeader(
  text: string,
  context: { id: string; path: string },
): { header: SessionHeader; format: SessionLogFormat } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isRecord(value) || value.type !== 'session') {
    throw new SessionError('SESSION_CORRUPT', `${context.path} is not a Rein session log (bad header line)`);
  }
  if (value.version !== fullEnvelopeFormat && value.version !== compactLogFormat) {
    throw new SessionError(
      'SESSION_VERSION',
      `session ${context.id} (${context.path}) has format version ${JSON.stringify(value.version)}; ` +
        `this Rein reads versions ${fullEnvelopeFormat} and ${compactLogFormat}. The file was not changed.`,
    );
  }
  if (value.id !== context.id || typeof value.createdAt !== 'number') {
    throw new SessionError(
      'SESSION_CORRUPT',
      `${context.path} has a header for session ${JSON.stringify(value.id)}, not ${context.id}`,
    );
  }
  const { type: _type, ...header } = value;
  const format = value.version as SessionLogFormat;
  // In memory a header always has the envelope's version; the format is the file's business.
  header.version = sessionLogVersion;
  return { header: header as unknown as SessionHeader, format };
}

/** Why a parsed full envelope is not the event with `expectedSeq`, or undefined when it is one. */
export function checkEvent(value: unknown, expectedSeq: number): string | undefined {
  if (!isRecord(value)) return 'the record is not an object';
  if (typeof value.type !== 'string' || value.type === '') return 'the record has no event type';
  if (value.seq !== expectedSeq) return `seq is ${JSON.stringify(value.seq)}, expected ${expectedSeq}`;
  if (typeof value.time !== 'number' || !Number.isFinite(value.time)) return 'the record has no valid time';
  if (!('data' in value)) return 'the record has no data';
  if (value.ignorable !== undefined && value.ignorable !== true) return 'ignorable must be true when present';
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
