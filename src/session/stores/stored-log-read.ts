import { SessionLog } from '../session-log.ts';
import type { StoredSessionLog } from '../session-store.ts';
import { tallySession } from '../session-summary.ts';
import type { SessionTally } from '../session-summary.ts';
import { loadFromSnapshot, loadFullLog } from './loaded-session-log.ts';
import type { LoadedSessionLog } from './loaded-session-log.ts';
import type { SessionSnapshot } from './session-snapshot.ts';

/**
 * Reads a session file for reading only: from its snapshot when one matches (the covered prefix is
 * indexed and decoded on demand, only the events after it are parsed, and the snapshot's scan states
 * come with it), in full otherwise (no scan states). Nothing is repaired or written.
 */
export async function readStoredLog(
  bytes: Buffer,
  readSnapshot: () => Promise<SessionSnapshot | undefined>,
  context: { id: string; path: string },
): Promise<StoredSessionLog> {
  return storedLogOf((await loadFromSnapshot(bytes, readSnapshot, context)) ?? loadFullLog(bytes, context));
}

/** A loaded log as `SessionStore.readLog` answers: its header, its events as a log, its scan states. */
export function storedLogOf(loaded: LoadedSessionLog): StoredSessionLog {
  return { header: loaded.header, log: logOf(loaded), scans: loaded.resumeFrom?.scans ?? {} };
}

/**
 * The listing tally of a session file from its snapshot: the snapshot's tally, then the events after
 * it (the covered prefix is not decoded). Undefined when no snapshot matches the file or anything after
 * it is wrong: a full read then tallies it (and reports a damaged line).
 */
export async function tallyFromSnapshot(
  bytes: Buffer,
  readSnapshot: () => Promise<SessionSnapshot | undefined>,
  context: { id: string; path: string },
): Promise<{ tally: SessionTally; format: LoadedSessionLog['format'] } | undefined> {
  const loaded = await loadFromSnapshot(bytes, readSnapshot, context);
  if (loaded === undefined) return undefined;
  return { tally: tallySession(loaded.header, logOf(loaded), loaded.prefixTally), format: loaded.format };
}

function logOf(loaded: LoadedSessionLog): SessionLog {
  const log = new SessionLog(loaded.resumeFrom?.prefix);
  for (const event of loaded.events) log.push(deepFreeze(event));
  return log;
}

// The log hands out its events as they are: frozen like the prefix's, so no reader changes another's.
function deepFreeze<Value extends object>(value: Value): Value {
  if (Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    if (typeof member === 'object' && member !== null) deepFreeze(member);
  }
  return Object.freeze(value);
}
