import type { SessionHeader } from '../session.ts';
import { SessionError } from '../session-error.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { isKnownSessionEventType } from '../session-event.ts';

/** The on-disk format version this code reads and writes. */
export const sessionLogVersion = 0;

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
}

/** The header line of a new session file. */
export function encodeHeaderLine(header: SessionHeader): string {
  return `${JSON.stringify({ type: 'session', ...header })}\n`;
}

/** One event as its verbatim JSONL line. */
export function encodeEventLine(event: AnySessionEvent): string {
  return `${JSON.stringify(event)}\n`;
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
  const completeBytes = bytes.lastIndexOf(newline) + 1;
  const tornBytes = bytes.length - completeBytes;
  // Lines are decoded one at a time straight from the buffer: no copy of the whole file as one string,
  // and every line's byte offset is known exactly for error reports.
  const headerEnd = completeBytes === 0 ? -1 : bytes.indexOf(newline);
  if (headerEnd < 0) {
    throw new SessionError(
      'SESSION_CORRUPT',
      `${context.path} is not a Rein session log: it has no complete header line (${bytes.length} bytes)`,
    );
  }
  const header = parseHeader(bytes.toString('utf8', 0, headerEnd), context);
  const events: AnySessionEvent[] = [];
  let line = 1;
  for (let start = headerEnd + 1; start < completeBytes;) {
    const end = bytes.indexOf(newline, start);
    line++;
    let problem: string | undefined;
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8', start, end));
    } catch {
      problem = 'the line is not valid JSON';
    }
    if (problem === undefined) problem = checkEvent(value, events.length);
    if (problem !== undefined) {
      const error = new SessionCorruptError({
        id: context.id,
        path: context.path,
        line,
        offset: start,
        goodEvents: events.length,
        reason: problem,
      });
      if (context.salvage === true) return { header, events, completeBytes, tornBytes, corrupt: error };
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
  return { header, events, completeBytes, tornBytes };
}

function parseHeader(text: string, context: { id: string; path: string }): SessionHeader {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isRecord(value) || value.type !== 'session') {
    throw new SessionError('SESSION_CORRUPT', `${context.path} is not a Rein session log (bad header line)`);
  }
  if (value.version !== sessionLogVersion) {
    throw new SessionError(
      'SESSION_VERSION',
      `session ${context.id} (${context.path}) has format version ${JSON.stringify(value.version)}; ` +
        `this Rein reads version ${sessionLogVersion}. The file was not changed.`,
    );
  }
  if (value.id !== context.id || typeof value.createdAt !== 'number') {
    throw new SessionError(
      'SESSION_CORRUPT',
      `${context.path} has a header for session ${JSON.stringify(value.id)}, not ${context.id}`,
    );
  }
  const { type: _type, ...header } = value;
  return header as unknown as SessionHeader;
}

function checkEvent(value: unknown, expectedSeq: number): string | undefined {
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
