import { SessionLog } from '../session-log.ts';
import type { StoredSessionLog } from '../session-store.ts';
import { loadFromSnapshot, loadFullLog } from './loaded-session-log.ts';
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
  const loaded = (await loadFromSnapshot(bytes, readSnapshot, context)) ?? loadFullLog(bytes, context);
  const log = new SessionLog(loaded.resumeFrom?.prefix);
  for (const event of loaded.events) log.push(deepFreeze(event));
  return { header: loaded.header, log, scans: loaded.resumeFrom?.scans ?? {} };
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
