import { createHash, randomUUID } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionHeader } from '../session.ts';
import type { SessionTally } from '../session-summary.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { surfaceEventTypes } from '../session-event.ts';
import { CompactLogCodec } from './compact-log-codec.ts';
import { LazyLogPrefix } from './lazy-log-prefix.ts';
import { parseEventLines } from './session-log-format.ts';

/** The version of the snapshot file format; a snapshot of any other version is ignored. */
export const sessionSnapshotVersion = 1;

/**
 * What a format 1 log's derived state is after its first `events` events (where no turn is open), and
 * the check that ties it to those bytes of the log: an optimisation beside the log, never a second truth.
 */
export interface SessionSnapshot {
  version: typeof sessionSnapshotVersion;
  id: string;
  /** The events covered: the log's first lines after its header. */
  events: number;
  /** The bytes covered: the header line and those event lines. */
  bytes: number;
  /** The SHA-256 (hex) of the covered bytes. */
  sha256: string;
  /** The surface after the covered events: the seqs on it, in order, and its replacement generation. */
  surface: { nodes: number[]; generation: number };
  /** The listing tally of the covered events. */
  tally: SessionTally;
}

/** A log resumed from its snapshot: its prefix read on demand, the state after it, the parsed tail. */
export interface ResumedLog {
  prefix: LazyLogPrefix;
  surface: { nodes: readonly number[]; generation: number };
  lastTurn: number;
  /** The tally of the prefix's events. */
  tally: SessionTally;
  /** The events after the prefix, parsed and checked as a full read checks them. */
  tail: AnySessionEvent[];
  /** The decoder after the tail: it encodes the appends that follow. */
  codec: CompactLogCodec;
  /** The SHA-256 of the file's complete lines so far (updated, never digested). */
  hash: Hash;
}

/**
 * Opens a format 1 log from `snapshot` when the snapshot matches the log: its covered bytes hash to its
 * check, hold exactly its number of events and end where no turn is open, and its surface names
 * message events among them. Returns undefined when it does not match (the caller reads the log in
 * full, with the same result); a bad record in the tail throws as a full read does.
 */
export function resumeFromSnapshot(
  bytes: Buffer,
  log: { header: SessionHeader; headerEnd: number; completeBytes: number },
  snapshot: SessionSnapshot,
  context: { id: string; path: string },
): ResumedLog | undefined {
  if (snapshot.id !== context.id || snapshot.bytes > log.completeBytes || snapshot.bytes <= log.headerEnd)
    return undefined;
  const hash = createHash('sha256').update(bytes.subarray(0, snapshot.bytes));
  if (hash.copy().digest('hex') !== snapshot.sha256) return undefined;
  const prefix = LazyLogPrefix.scan(
    {
      id: context.id,
      path: context.path,
      createdAt: log.header.createdAt,
      bytes,
      start: log.headerEnd + 1,
      end: snapshot.bytes,
    },
    snapshot.events,
  );
  if (typeof prefix === 'string') return undefined;
  const end = prefix.endState;
  if (end.openTurn !== undefined) return undefined;
  for (const node of snapshot.surface.nodes)
    if (node >= prefix.length || !surfaceEventTypes.has(prefix.typeAt(node))) return undefined;
  const codec = new CompactLogCodec(log.header.createdAt, end);
  const { events: tail } = parseEventLines(bytes, {
    start: snapshot.bytes,
    end: log.completeBytes,
    codec,
    firstSeq: prefix.length,
    firstLine: prefix.length + 2,
    context,
  });
  hash.update(bytes.subarray(snapshot.bytes, log.completeBytes));
  return {
    prefix,
    surface: snapshot.surface,
    lastTurn: end.lastTurn,
    tally: snapshot.tally,
    tail,
    codec,
    hash,
  };
}

/**
 * Brings `covered.hash` (the SHA-256 of the file's first `hashedBytes` bytes, `hashedLines` lines) up to
 * the whole file and digests it: the file's size and hash, or undefined when the bytes appended since
 * are not exactly complete lines making `lines` in all, or the file cannot be read.
 */
export async function hashAppendedLines(
  path: string,
  covered: { hash: Hash; hashedBytes: number; hashedLines: number },
  lines: number,
): Promise<{ bytes: number; sha256: string } | undefined> {
  try {
    const handle = await open(path, 'r');
    try {
      const size = (await handle.stat()).size;
      if (size < covered.hashedBytes) return undefined;
      const appended = Buffer.alloc(size - covered.hashedBytes);
      for (let read = 0; read < appended.length;) {
        const { bytesRead } = await handle.read(
          appended,
          read,
          appended.length - read,
          covered.hashedBytes + read,
        );
        if (bytesRead === 0) return undefined;
        read += bytesRead;
      }
      if (appended.length > 0 && appended[appended.length - 1] !== 0x0a) return undefined;
      if (covered.hashedLines + countLines(appended) !== lines) return undefined;
      covered.hash.update(appended);
      return { bytes: size, sha256: covered.hash.digest('hex') };
    } finally {
      await handle.close();
    }
  } catch {
    // The file went away or cannot be read: no snapshot, the next open reads the log in full.
    return undefined;
  }
}

/** The number of newline bytes in `bytes`. */
function countLines(bytes: Buffer): number {
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) lines++;
  return lines;
}

/**
 * The disk store's snapshot files: one JSON file per session under `<root>/.snapshots`, replaced whole
 * by a rename. Reading or writing one is best effort: a missing, unreadable or malformed snapshot
 * reads as none, and a failed write leaves none.
 */
export class SessionSnapshotFiles {
  readonly #directory: string;

  constructor(root: string) {
    this.#directory = join(root, '.snapshots');
  }

  /** The snapshot of a session, if a well-formed one of this version exists. */
  async read(id: string): Promise<SessionSnapshot | undefined> {
    let value: unknown;
    try {
      value = JSON.parse(await readFile(this.#pathOf(id), 'utf8'));
    } catch {
      // No snapshot yet, or one cut short: the log is read in full.
      return undefined;
    }
    return isSnapshot(value, id) ? value : undefined;
  }

  /** Saves a session's snapshot, replacing the one before. */
  async write(snapshot: SessionSnapshot): Promise<void> {
    const path = this.#pathOf(snapshot.id);
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      await mkdir(this.#directory, { recursive: true, mode: 0o700 });
      await writeFile(temporary, JSON.stringify(snapshot), { mode: 0o600 });
      await rename(temporary, path);
    } catch {
      // A read-only or full disk: the next open reads the log in full. The temporary may be left over.
      await unlink(temporary).catch(() => {
        // It was never created.
      });
    }
  }

  /** Drops a session's snapshot (when the session is deleted). */
  async remove(id: string): Promise<void> {
    await unlink(this.#pathOf(id)).catch(() => {
      // There was no snapshot.
    });
  }

  #pathOf(id: string): string {
    return join(this.#directory, `${id}.json`);
  }
}

/** `value` when it is a well-formed snapshot of this version for session `id` (parsed JSON), else undefined. */
export function checkedSessionSnapshot(value: unknown, id: string): SessionSnapshot | undefined {
  return isSnapshot(value, id) ? value : undefined;
}

function isSnapshot(value: unknown, id: string): value is SessionSnapshot {
  if (typeof value !== 'object' || value === null) return false;
  const snapshot = value as Partial<SessionSnapshot>;
  const surface = snapshot.surface;
  return (
    snapshot.version === sessionSnapshotVersion &&
    snapshot.id === id &&
    isCount(snapshot.events) &&
    isCount(snapshot.bytes) &&
    typeof snapshot.sha256 === 'string' &&
    typeof surface === 'object' &&
    surface !== null &&
    isCount(surface.generation) &&
    Array.isArray(surface.nodes) &&
    surface.nodes.every(isCount) &&
    typeof snapshot.tally === 'object' &&
    snapshot.tally !== null &&
    snapshot.tally.summary?.id === id &&
    Array.isArray(snapshot.tally.routes)
  );
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
