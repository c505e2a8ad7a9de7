import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import type { HookBus } from '../../hooks/index.ts';
import type { Session, SessionHeader, SessionResumePoint } from '../session.ts';
import { repairInterruptedTail } from '../crash-repair.ts';
import type { SessionTally } from '../session-summary.ts';
import type { AnySessionEvent } from '../session-event.ts';
import type { SessionLineEncoder } from './compact-log-codec.ts';
import type { SessionLogFormat } from './session-log-format.ts';
import { compactLogFormat, parseSessionLog, parseSessionLogHeader } from './session-log-format.ts';
import type { SessionFileWriter } from './session-file-writer.ts';
import { resumeFromSnapshot } from './session-snapshot.ts';
import { constructStoredSession } from './stored-session.ts';
import type { SessionSnapshot } from './session-snapshot.ts';

/** A session file read for opening: in full, or from its snapshot (a prefix read on demand and the tail). */
export interface LoadedSessionLog {
  header: SessionHeader;
  format: SessionLogFormat;
  /** The events read (all of them, or the tail after the resume point), the first with seq `firstSeq`. */
  events: AnySessionEvent[];
  firstSeq: number;
  /** Where the session starts when a snapshot was used. */
  resumeFrom: SessionResumePoint | undefined;
  /** The tally of the events before `firstSeq`, when a snapshot was used. */
  prefixTally: { tally: SessionTally; events: number } | undefined;
  completeBytes: number;
  tornBytes: number;
  /** Encodes the appends that follow, in the file's format. */
  encoder: SessionLineEncoder;
  /** The SHA-256 of the file's complete lines (updated, never digested: appends go on from it). */
  hash: Hash;
}

/** Reads a whole session file (see `parseSessionLog` for what it refuses). */
export function loadFullLog(bytes: Buffer, context: { id: string; path: string }): LoadedSessionLog {
  const parsed = parseSessionLog(bytes, context);
  return {
    header: parsed.header,
    format: parsed.format,
    events: parsed.events,
    firstSeq: 0,
    resumeFrom: undefined,
    prefixTally: undefined,
    completeBytes: parsed.completeBytes,
    tornBytes: parsed.tornBytes,
    encoder: parsed.encoder,
    hash: createHash('sha256').update(bytes.subarray(0, parsed.completeBytes)),
  };
}

/**
 * Reads a format 1 session file from its snapshot (`readSnapshot`, asked only for such a file): the
 * covered prefix is checked and indexed, not parsed, and only the tail is read. Undefined when there is
 * no snapshot, it does not match the file, or anything after it is wrong: the full read then decides.
 */
export async function loadFromSnapshot(
  bytes: Buffer,
  readSnapshot: () => Promise<SessionSnapshot | undefined>,
  context: { id: string; path: string },
): Promise<LoadedSessionLog | undefined> {
  let log: ReturnType<typeof parseSessionLogHeader>;
  try {
    log = parseSessionLogHeader(bytes, context);
  } catch {
    // The full read reports what is wrong with the header.
    return undefined;
  }
  if (log.format !== compactLogFormat) return undefined;
  const snapshot = await readSnapshot();
  if (snapshot === undefined) return undefined;
  let resumed: ReturnType<typeof resumeFromSnapshot>;
  try {
    resumed = resumeFromSnapshot(bytes, log, snapshot, context);
  } catch {
    // A bad record after the snapshot: the full read reports it with its line and offset.
    return undefined;
  }
  if (resumed === undefined) return undefined;
  return {
    header: log.header,
    format: log.format,
    events: resumed.tail,
    firstSeq: resumed.prefix.length,
    resumeFrom: {
      prefix: resumed.prefix,
      surface: resumed.surface,
      lastTurn: resumed.lastTurn,
      scans: resumed.scans,
    },
    prefixTally: { tally: resumed.tally, events: resumed.prefix.length },
    completeBytes: log.completeBytes,
    tornBytes: bytes.length - log.completeBytes,
    encoder: resumed.codec,
    hash: resumed.hash,
  };
}

/** A live session built from a loaded log: its writer, and what the writer appends when it resumes. */
export interface BuiltSession {
  session: Session;
  writer: SessionFileWriter;
  /** The crash repair's closing lines, in the file's format. */
  closers: string;
  /** The number of events in the file once the closers are appended. */
  events: number;
}

/**
 * Builds the live session of a loaded log and repairs an interrupted tail, touching no file: `writer`
 * still has to resume the file with the closers. A stored log that breaks the session rules is
 * `SESSION_CORRUPT`.
 */
export function buildLoadedSession(
  loaded: LoadedSessionLog,
  writer: SessionFileWriter,
  hooks: HookBus | undefined,
): BuiltSession {
  const repaired = repairInterruptedTail(loaded.events);
  // The parsed events are this store's own: the session adopts them instead of copying them again.
  const session = constructStoredSession({
    header: loaded.header,
    seed: repaired,
    persistence: writer,
    hooks,
    untouched: 'the file was not changed',
    seedOwned: true,
    resumeFrom: loaded.resumeFrom,
  });
  // The closers as the session committed them (its own envelope order), in the file's format.
  const read = loaded.firstSeq + loaded.events.length;
  const events = loaded.firstSeq + repaired.length;
  let closers = '';
  for (const event of session.log.slice(read, events)) closers += loaded.encoder.encode(event);
  writer.encodeWith(loaded.encoder);
  return { session, writer, closers, events };
}
