import type { Hash } from 'node:crypto';
import type { Session } from '../session.ts';
import type { SessionTally } from '../session-summary.ts';
import { tallySession } from '../session-summary.ts';
import type { Queryable } from './postgres-lease.ts';
import type { SessionSnapshot } from './session-snapshot.ts';
import {
  decodeSessionSnapshot,
  encodeSessionSnapshot,
  sessionSnapshotVersion,
  snapshotSurfaceEvents,
} from './session-snapshot.ts';

/** What a live session's log held when it was opened or created, for its snapshot at release. */
export interface CoveredLog {
  /** The SHA-256 of the header line and every stored line so far (updated, never digested). */
  hash: Hash;
  /** The bytes it covers. */
  hashedBytes: number;
  /** The events it covers (the stored rows from seq 0 up to this one). */
  hashedEvents: number;
  /** The events read from the rows at the open (0 for a session created by this process), never updated. */
  readEvents: number;
  /** The tally of the events before the snapshot the session was resumed from, if it was. */
  prefixTally: { tally: SessionTally; events: number } | undefined;
}

/** A session's stored snapshot, if a well-formed one exists; any failure reads as none (the log decides). */
export async function readSnapshotRow(
  db: Queryable,
  schema: string,
  id: string,
): Promise<SessionSnapshot | undefined> {
  try {
    const row = (
      await db.query<{ snapshot: string }>(
        `select snapshot from ${schema}.session_snapshots where session_id = $1`,
        [id],
      )
    ).rows[0];
    return row === undefined ? undefined : decodeSessionSnapshot(row.snapshot, id);
  } catch {
    // Unreadable or malformed: the next open reads the log in full, with the same result.
    return undefined;
  }
}

/**
 * Saves the snapshot of a released format 1 session whose every event is committed and whose last
 * turn is closed, as the disk store does for its files: the covered hash is brought up to date with the
 * rows appended since the open (read back, so the snapshot hashes what is stored, not what was meant to
 * be), and replaces the session's snapshot row. Best effort: any doubt leaves the old snapshot.
 */
export async function saveSnapshotRow(
  db: Queryable,
  schema: string,
  session: Session,
  covered: CoveredLog,
): Promise<void> {
  if (session.openTurn !== undefined) return;
  try {
    const rows = (
      await db.query<{ first: string; count: number; lines: string }>(
        `select first_seq::text as first, line_count as count, lines from ${schema}.event_batches
         where session_id = $1 and first_seq >= $2 order by first_seq`,
        [session.id, covered.hashedEvents],
      )
    ).rows;
    let events = covered.hashedEvents;
    let bytes = covered.hashedBytes;
    for (const row of rows) {
      if (Number(row.first) !== events) return;
      covered.hash.update(row.lines, 'utf8');
      bytes += Buffer.byteLength(row.lines, 'utf8');
      events += row.count;
    }
    if (events !== session.length) return;
    const snapshot: SessionSnapshot = {
      version: sessionSnapshotVersion,
      id: session.id,
      events,
      bytes,
      sha256: covered.hash.digest('hex'),
      surface: { nodes: [...session.surfaceNodes], generation: session.replaceGeneration },
      tally: tallySession(session.header, session.log, covered.prefixTally),
      scans: session.scans.save(session.length),
      // The surface events among those read from the rows at the open (as on disk).
      surfaceEvents: snapshotSurfaceEvents(session, covered.readEvents),
    };
    await db.query(
      `insert into ${schema}.session_snapshots (session_id, snapshot) values ($1, $2)
       on conflict (session_id) do update set snapshot = excluded.snapshot`,
      [session.id, encodeSessionSnapshot(snapshot)],
    );
  } catch {
    // The database went away meanwhile: the next open reads the log in full (or an older snapshot).
  }
}
