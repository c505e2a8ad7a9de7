import { createHash, randomUUID } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SavedLogScan } from '../log-scan-states.ts';
import type { Session, SessionHeader } from '../session.ts';
import type { SessionTally } from '../session-summary.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { surfaceEventTypes } from '../session-event.ts';
import { CompactLogCodec } from './compact-log-codec.ts';
import { LazyLogPrefix } from './lazy-log-prefix.ts';
import { checkEvent, parseEventLines } from './session-log-format.ts';

/** The version of the snapshot file format; a snapshot of any other version is ignored. */
export const sessionSnapshotVersion = 2;

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
  /** What the log's scans derived from (a prefix of) the covered events, by scan name. */
  scans: Record<string, SavedLogScan>;
  /**
   * Covered events on the surface, as a full read builds them (a message rebuilt from its step's
   * chunks is the costly read of a resume): read from here instead of decoding their stretch.
   */
  surfaceEvents: AnySessionEvent[];
}

/** A log resumed from its snapshot: its prefix read on demand, the state after it, the parsed tail. */
export interface ResumedLog {
  prefix: LazyLogPrefix;
  surface: { nodes: readonly number[]; generation: number };
  lastTurn: number;
  scans: Record<string, SavedLogScan>;
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
  prefix.keep(checkedSurfaceEvents(snapshot, prefix));
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
    scans: snapshot.scans,
    tally: snapshot.tally,
    tail,
    codec,
    hash,
  };
}

/**
 * The snapshot's surface events when every one of them is a covered event on its surface, of the type
 * its line has, shaped as an event; none otherwise (they are then decoded from the log as they are read).
 */
function checkedSurfaceEvents(snapshot: SessionSnapshot, prefix: LazyLogPrefix): AnySessionEvent[] {
  const nodes = new Set(snapshot.surface.nodes);
  for (const event of snapshot.surfaceEvents) {
    const seq = (event as { seq?: unknown }).seq;
    if (typeof seq !== 'number' || !nodes.has(seq) || checkEvent(event, seq) !== undefined) return [];
    if (prefix.typeAt(seq) !== event.type) return [];
  }
  return snapshot.surfaceEvents;
}

// At most this many characters of JSON of surface events go into a snapshot (the newest first): a
// surface is bounded by the model's context window, a session without compaction perhaps not.
const surfaceEventsBudget = 4 * 1024 * 1024;

/**
 * What a snapshot saves of the surface: the surface events among the first `read` (those read from the file: a full read of it builds the same
 * events, which those appended since, built by this process, need not match member for member), the
 * newest within the budget, in surface order.
 */
export function snapshotSurfaceEvents(session: Session, read: number): AnySessionEvent[] {
  const events: AnySessionEvent[] = [];
  const nodes = session.surfaceNodes;
  let size = 0;
  try {
    for (let position = nodes.length - 1; position >= 0; position--) {
      const seq = nodes[position]!;
      if (seq >= read) continue;
      const event = session.log.at(seq)!;
      size += JSON.stringify(event).length;
      if (size > surfaceEventsBudget) break;
      events.push(event);
    }
  } catch {
    // A deferred event that cannot be decoded: the next open decodes them from the log (and reports it).
    return [];
  }
  return events.reverse();
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

  /** The snapshot of a session, if an intact, well-formed one of this version exists. */
  async read(id: string): Promise<SessionSnapshot | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.#pathOf(id));
    } catch {
      // No snapshot yet: the log is read in full.
      return undefined;
    }
    return decodeSessionSnapshotBytes(bytes, id);
  }

  /** Saves a session's snapshot, replacing the one before. */
  async write(snapshot: SessionSnapshot): Promise<void> {
    const path = this.#pathOf(snapshot.id);
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      await mkdir(this.#directory, { recursive: true, mode: 0o700 });
      await writeFile(temporary, encodeSessionSnapshotBytes(snapshot), { mode: 0o600 });
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

// A stored snapshot is `{"check":"<SHA-256 hex of the snapshot's JSON>","snapshot":<that JSON>}`: still
// JSON, and checkable without serializing it again, because the checked JSON starts at a fixed offset.
const checkOpening = '{"check":"';
const snapshotOpening = '","snapshot":';
const checkedJsonStart = checkOpening.length + 64 + snapshotOpening.length;

/**
 * A snapshot's stored bytes: its JSON behind the SHA-256 of that JSON, so a damaged copy reads as none;
 * converted to UTF-8 once, since the JSON's bytes are both what is hashed and what is written.
 */
export function encodeSessionSnapshotBytes(snapshot: SessionSnapshot): Buffer {
  const json = Buffer.from(JSON.stringify(snapshot));
  const check = createHash('sha256').update(json).digest('hex');
  return Buffer.concat([Buffer.from(`${checkOpening}${check}${snapshotOpening}`), json, closingBrace]);
}

const closingBrace = Buffer.from('}');

/**
 * The snapshot stored bytes hold, if they are whole (the JSON's bytes hash to the check: the surface
 * events it serves in place of the log's lines must be exactly what was saved) and are a well-formed
 * snapshot of this version for session `id`; anything else reads as none, and the log is read in full.
 */
export function decodeSessionSnapshotBytes(bytes: Buffer, id: string): SessionSnapshot | undefined {
  // The opening is ASCII: its characters are its bytes.
  if (
    bytes.length <= checkedJsonStart ||
    bytes.toString('latin1', 0, checkOpening.length) !== checkOpening ||
    bytes.toString('latin1', checkOpening.length + 64, checkedJsonStart) !== snapshotOpening ||
    bytes[bytes.length - 1] !== closingBrace[0]
  )
    return undefined;
  const json = bytes.subarray(checkedJsonStart, bytes.length - 1);
  if (
    createHash('sha256').update(json).digest('hex') !==
    bytes.toString('latin1', checkOpening.length, checkOpening.length + 64)
  )
    return undefined;
  return parsedSnapshot(json.toString('utf8'), id);
}

/** `encodeSessionSnapshotBytes` as text, for a store that keeps the snapshot in a text column. */
export function encodeSessionSnapshot(snapshot: SessionSnapshot): string {
  return encodeSessionSnapshotBytes(snapshot).toString('utf8');
}

/** `decodeSessionSnapshotBytes` of a stored text. */
export function decodeSessionSnapshot(text: string, id: string): SessionSnapshot | undefined {
  return decodeSessionSnapshotBytes(Buffer.from(text, 'utf8'), id);
}

/** The snapshot checked JSON holds, if it is a well-formed snapshot of this version for session `id`. */
function parsedSnapshot(json: string, id: string): SessionSnapshot | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    // Checked but not JSON (written by something else): the log is read in full.
    return undefined;
  }
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
    Array.isArray(snapshot.tally.routes) &&
    typeof snapshot.scans === 'object' &&
    snapshot.scans !== null &&
    !Array.isArray(snapshot.scans) &&
    Array.isArray(snapshot.surfaceEvents)
  );
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
