import type { HookBus } from '../../hooks/index.ts';
import { repairInterruptedTail } from '../crash-repair.ts';
import type { Session } from '../session.ts';
import { SessionError } from '../session-error.ts';
import { loadFromSnapshot, loadFullLog } from './loaded-session-log.ts';
import type { LoadedSessionLog } from './loaded-session-log.ts';
import type { CoveredLog } from './postgres-session-snapshots.ts';
import type { StoredSessionLogText } from './postgres-session-rows.ts';
import type { PostgresSessionWriter } from './postgres-session-writer.ts';
import type { SessionLogFormat } from './session-log-format.ts';
import { compactLogFormat } from './session-log-format.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import { storedLogOf } from './stored-log-read.ts';
import type { StoredSessionLog } from '../session-store.ts';
import { constructStoredSession } from './stored-session.ts';

/** A stored session opened for writing: live, its writer resumed, and what its log held for a snapshot. */
export interface LoadedPostgresSession {
  session: Session;
  writer: PostgresSessionWriter;
  format: SessionLogFormat;
  covered: CoveredLog;
}

/**
 * Builds the live session of a stored log, from its snapshot when one matches the rows (format 1 only;
 * else in full, with the same result), and commits the crash repair's closers through its writer
 * (`makeWriter`, given the number of stored events). A header whose format differs from the recorded
 * one is `SESSION_CORRUPT`; a stored log that breaks the session rules is refused as on disk.
 */
export async function loadPostgresSession(
  stored: StoredSessionLogText,
  options: {
    id: string;
    /** Where the rows are, for error messages. */
    path: string;
    readSnapshot: () => Promise<SessionSnapshot | undefined>;
    makeWriter: (storedEvents: number) => PostgresSessionWriter;
    hooks: HookBus | undefined;
  },
): Promise<LoadedPostgresSession> {
  const { id, path } = options;
  const bytes = Buffer.from(stored.text, 'utf8');
  let loaded: LoadedSessionLog | undefined;
  let built: BuiltSession | undefined;
  if (stored.format === compactLogFormat) {
    loaded = await loadFromSnapshot(bytes, options.readSnapshot, { id, path });
    if (loaded !== undefined) {
      try {
        built = build(loaded, options);
      } catch {
        // The snapshot only saves work: whatever went wrong with it, the full read decides.
        built = undefined;
      }
    }
  }
  if (built === undefined) {
    loaded = loadFullLog(bytes, { id, path });
    checkFormat(id, path, stored.format, loaded.format);
    built = build(loaded, options);
  }
  const { session, writer, closers, lastTime } = built;
  try {
    await writer.resume(closers, lastTime);
  } catch (error) {
    session.close();
    writer.abandon();
    throw error;
  }
  const log = loaded!;
  return {
    session,
    writer,
    format: log.format,
    covered: {
      hash: log.hash,
      hashedBytes: log.completeBytes,
      hashedEvents: log.firstSeq + log.events.length,
      readEvents: log.firstSeq + log.events.length,
      prefixTally: log.prefixTally,
    },
  };
}

/**
 * Reads a stored log for reading only, as the disk store's `readLog` does: from its snapshot when one
 * matches the rows (format 1; the covered prefix is decoded on demand and the snapshot's scan states come
 * with it), in full otherwise. Nothing is repaired or written.
 */
export async function readPostgresLog(
  stored: StoredSessionLogText,
  options: { id: string; path: string; readSnapshot: () => Promise<SessionSnapshot | undefined> },
): Promise<StoredSessionLog> {
  const { id, path } = options;
  const bytes = Buffer.from(stored.text, 'utf8');
  if (stored.format === compactLogFormat) {
    const loaded = await loadFromSnapshot(bytes, options.readSnapshot, { id, path });
    if (loaded !== undefined) return storedLogOf(loaded);
  }
  const loaded = loadFullLog(bytes, { id, path });
  checkFormat(id, path, stored.format, loaded.format);
  return storedLogOf(loaded);
}

/** Refuses a session whose header line names another format than its row records. */
export function checkFormat(id: string, path: string, recorded: number, header: SessionLogFormat): void {
  if (recorded === header) return;
  throw new SessionError(
    'SESSION_CORRUPT',
    `session ${id} (${path}) is recorded in format ${recorded} but its header line says format ` +
      `${header}; nothing was changed`,
  );
}

interface BuiltSession {
  session: Session;
  writer: PostgresSessionWriter;
  /** The crash repair's closing lines in the session's format, each ending in its newline. */
  closers: string[];
  /** The time of the last closer (0 without any). */
  lastTime: number;
}

function build(
  loaded: LoadedSessionLog,
  options: { makeWriter: (storedEvents: number) => PostgresSessionWriter; hooks: HookBus | undefined },
): BuiltSession {
  const repaired = repairInterruptedTail(loaded.events);
  const read = loaded.firstSeq + loaded.events.length;
  const writer = options.makeWriter(read);
  let session: Session | undefined;
  try {
    // The parsed events are this store's own: the session adopts them instead of copying them again.
    session = constructStoredSession({
      header: loaded.header,
      seed: repaired,
      persistence: writer,
      hooks: options.hooks,
      untouched: 'nothing was changed',
      seedOwned: true,
      resumeFrom: loaded.resumeFrom,
    });
    // The closers as the session committed them (its own envelope order), in the session's format,
    // encoded before what the session appended while it was built (its `session/end-seed`), as on disk.
    const closerEvents = session.log.slice(read, loaded.firstSeq + repaired.length);
    const closers = closerEvents.map((event) => loaded.encoder.encode(event));
    writer.encodeWith(loaded.encoder);
    return { session, writer, closers, lastTime: closerEvents.at(-1)?.time ?? 0 };
  } catch (error) {
    session?.close();
    writer.abandon();
    throw error;
  }
}
