import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { mkdir, open as openFile, readFile, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { HookBus } from '../../hooks/index.ts';
import { Session } from '../session.ts';
import type { SessionHeader } from '../session.ts';
import { SessionError } from '../session-error.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { forkStoredSession } from '../session-fork.ts';
import type {
  PricingLookup,
  SessionForkOptions,
  SessionStore,
  SessionSummary,
  StoredSessionLog,
} from '../session-store.ts';
import { summarizeSession, tallySession } from '../session-summary.ts';
import type { SessionTally } from '../session-summary.ts';
import {
  SessionSnapshotFiles,
  hashAppendedLines,
  sessionSnapshotVersion,
  snapshotSurfaceEvents,
} from './session-snapshot.ts';
import { buildLoadedSession, loadFromSnapshot, loadFullLog } from './loaded-session-log.ts';
import type { BuiltSession, LoadedSessionLog } from './loaded-session-log.ts';
import { DiskSessionSummaries } from './disk-session-summaries.ts';
import { readStoredLog } from './stored-log-read.ts';
import { SessionFileWriter } from './session-file-writer.ts';
import { linkIntoPlace } from './link-into-place.ts';
import { checkSessionId, constructStoredSession, isValidSessionId } from './stored-session.ts';
import { parseTransferredLog } from './session-log-transfer.ts';
import type { SessionDurability } from './session-file-writer.ts';
import { ioError, isCode } from './session-io-error.ts';
import { SessionLock, SessionLockedError, readSessionLockHolder } from './session-lock.ts';
import type { ParsedSessionLog, SessionLogFormat } from './session-log-format.ts';
import {
  compactLogFormat,
  encodeHeaderLine,
  encodeSessionLog,
  fullEnvelopeFormat,
  lineEncoder,
  parseSessionLog,
  sessionLogVersion,
} from './session-log-format.ts';

/** Options of a disk session store. */
export interface DiskSessionStoreOptions {
  /** The directory holding one `<id>.jsonl` file per session (callers pass `<reinHome>/sessions`). */
  root: string;
  /** How long appended events may wait in memory before a background write; 100 ms by default. */
  batchWindowMs?: number;
  /** Prices models for the `cost` of session listings. */
  pricing?: PricingLookup;
  /** Called after each successful data sync of a live session with its number of durable events. */
  onDurable?: (sessionId: string, eventCount: number) => void;
  /** What survives what (`SessionDurability`): `power-loss` (the default) or `process-crash`. */
  durability?: SessionDurability;
}

interface LiveEntry {
  session: Session;
  writer: SessionFileWriter;
  lock: SessionLock;
  /** The file format of its log (a format 0 file keeps its format). */
  format: SessionLogFormat;
  /** The SHA-256 of the file's first `hashedBytes` bytes (its first `hashedLines` lines), kept open. */
  hash: Hash;
  hashedBytes: number;
  hashedLines: number;
  /** The tally of the events a snapshot covered when the session was resumed from one. */
  prefixTally: { tally: SessionTally; events: number } | undefined;
  /** How many leading events were read from the file (the rest were appended by this process). */
  readEvents: number;
}

/**
 * Sessions on disk, one append-only JSONL file per session (a header line, then one event per line,
 * files 0600 in a 0700 directory). One writer per session across processes (an O_EXCL lock file, a
 * dead holder's lock is taken over); reads never lock. Appends are batched and forced to disk at each
 * checkpoint; a torn final line is dropped on load, corruption before it is refused with its offset.
 */
export class DiskSessionStore implements SessionStore {
  readonly root: string;
  readonly #batchWindowMs: number | undefined;
  readonly #pricing: PricingLookup | undefined;
  readonly #onDurable: ((sessionId: string, eventCount: number) => void) | undefined;
  readonly #durability: SessionDurability | undefined;
  readonly #live = new Map<string, LiveEntry>();
  readonly #summaries: DiskSessionSummaries;
  readonly #snapshots: SessionSnapshotFiles;
  #hooks: HookBus | undefined;

  constructor(options: DiskSessionStoreOptions) {
    if (typeof options.root !== 'string' || options.root === '') {
      throw new SessionError('SESSION_IO', 'DiskSessionStore needs a root directory');
    }
    this.root = options.root;
    this.#snapshots = new SessionSnapshotFiles(options.root);
    this.#summaries = new DiskSessionSummaries({
      root: options.root,
      pricing: options.pricing,
      snapshots: this.#snapshots,
      readLog: (id, path) => this.#readLog(id, path),
    });
    this.#batchWindowMs = options.batchWindowMs;
    this.#pricing = options.pricing;
    this.#onDurable = options.onDurable;
    this.#durability = options.durability;
  }

  /** Attaches the hook bus live sessions publish on. */
  bind(hooks: HookBus): void {
    this.#hooks = hooks;
  }

  /** The file of a session. */
  pathOf(id: string): string {
    checkSessionId(id);
    return join(this.root, `${id}.jsonl`);
  }

  async create(
    header: Omit<SessionHeader, 'version' | 'createdAt'> & { createdAt?: number },
    options: { seed?: readonly AnySessionEvent[] } = {},
  ): Promise<Session> {
    const path = this.pathOf(header.id);
    await this.#ensureRoot();
    if (this.#live.has(header.id) || (await exists(path))) {
      throw new SessionError('SESSION_EXISTS', `session ${header.id} already exists`);
    }
    const lock = await this.#lock(header.id);
    const fullHeader: SessionHeader = {
      ...header,
      version: sessionLogVersion,
      createdAt: header.createdAt ?? Date.now(),
    };
    if (options.seed !== undefined) fullHeader.seedLength = options.seed.length;
    const writer = this.#writer(header.id, path);
    let session: Session | undefined;
    try {
      // Constructing first validates the seed before anything touches the disk; the writer buffers.
      session = constructStoredSession({
        header: fullHeader,
        seed: options.seed,
        persistence: writer,
        hooks: this.#hooks,
        untouched: 'the file was not changed',
      });
      const seed = options.seed ?? [];
      const encoder = lineEncoder(compactLogFormat, fullHeader.createdAt);
      let initial = encodeHeaderLine(fullHeader, compactLogFormat);
      for (const event of session.log.slice(0, seed.length)) initial += encoder.encode(event);
      // What the session appended while it was built (its end-seed marker) follows the seed.
      writer.encodeWith(encoder);
      try {
        await writer.create(initial, seed.length);
      } catch (error) {
        const cause = error instanceof SessionError ? error.cause : error;
        if (isCode(cause, 'EEXIST'))
          throw new SessionError('SESSION_EXISTS', `session ${header.id} already exists`);
        throw error;
      }
    } catch (error) {
      session?.close();
      await writer.close().catch(() => {
        // The file never opened or was never ours; the original error is what the caller needs.
      });
      await lock.release();
      throw error;
    }
    this.#live.set(header.id, {
      session,
      writer,
      lock,
      format: compactLogFormat,
      hash: createHash('sha256'),
      hashedBytes: 0,
      hashedLines: 0,
      prefixTally: undefined,
      readEvents: 0,
    });
    return session;
  }

  async open(id: string): Promise<Session> {
    const path = this.pathOf(id);
    if (this.#live.has(id)) throw new SessionLockedError(id, this.#live.get(id)!.lock.holder);
    await this.#assertExists(id, path);
    const lock = await this.#lock(id);
    let entry: LiveEntry;
    try {
      const bytes = await this.#readLog(id, path);
      let loaded = await loadFromSnapshot(bytes, () => this.#snapshots.read(id), { id, path });
      let built: BuiltSession | undefined;
      if (loaded !== undefined) {
        try {
          built = this.#build(loaded);
        } catch {
          // The snapshot only saves work: whatever went wrong with it, the full read decides.
          built = undefined;
        }
      }
      if (built === undefined) {
        loaded = loadFullLog(bytes, { id, path });
        built = this.#build(loaded);
      }
      const opened = built;
      try {
        await opened.writer.resume(loaded!.completeBytes, loaded!.tornBytes, opened.closers, opened.events);
      } catch (error) {
        opened.session.close();
        await opened.writer.close().catch(() => {
          // Nothing was written through this writer; the open error is what the caller needs.
        });
        throw error;
      }
      entry = {
        session: opened.session,
        writer: opened.writer,
        lock,
        format: loaded!.format,
        hash: loaded!.hash,
        hashedBytes: loaded!.completeBytes,
        hashedLines: loaded!.firstSeq + loaded!.events.length + 1,
        prefixTally: loaded!.prefixTally,
        readEvents: loaded!.firstSeq + loaded!.events.length,
      };
    } catch (error) {
      await lock.release();
      throw error;
    }
    this.#live.set(id, entry);
    return entry.session;
  }

  #build(loaded: LoadedSessionLog): BuiltSession {
    return buildLoadedSession(
      loaded,
      this.#writer(loaded.header.id, this.pathOf(loaded.header.id)),
      this.#hooks,
    );
  }

  async read(id: string): Promise<{ header: SessionHeader; events: AnySessionEvent[] }> {
    const path = this.pathOf(id);
    const live = this.#live.get(id);
    if (live !== undefined) return { header: { ...live.session.header }, events: live.session.log.slice() };
    const parsed = await this.#parse(id, path, false);
    return { header: parsed.header, events: parsed.events };
  }

  async readLog(id: string): Promise<StoredSessionLog> {
    const path = this.pathOf(id);
    const live = this.#live.get(id);
    if (live !== undefined) return { header: { ...live.session.header }, log: live.session.log, scans: {} };
    return readStoredLog(await this.#readLog(id, path), () => this.#snapshots.read(id), { id, path });
  }

  async list(): Promise<SessionSummary[]> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch (error) {
      if (isCode(error, 'ENOENT')) return [];
      throw ioError(this.root, error);
    }
    const rows: SessionSummary[] = [];
    for (const name of names) {
      if (!name.endsWith('.jsonl')) continue;
      const id = name.slice(0, -'.jsonl'.length);
      if (!isValidSessionId(id)) continue;
      const summary = await this.#summary(id);
      if (summary !== undefined) rows.push(summary);
    }
    return rows.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async delete(id: string): Promise<void> {
    const path = this.pathOf(id);
    const live = this.#live.get(id);
    if (live !== undefined) throw new SessionLockedError(id, live.lock.holder, 'dispose its agent first');
    await this.#assertExists(id, path);
    const lock = await this.#lock(id);
    try {
      await unlink(path);
    } catch (error) {
      if (isCode(error, 'ENOENT')) throw notFound(id, path);
      throw ioError(path, error);
    } finally {
      await lock.release();
    }
    await this.#summaries.remove(id);
    await this.#snapshots.remove(id);
  }

  async fork(id: string, options: SessionForkOptions = {}): Promise<SessionHeader> {
    const path = this.pathOf(id);
    const live = this.#live.get(id);
    if (live !== undefined)
      return forkStoredSession(
        this,
        { parent: live.session.header, events: live.session.events, held: true },
        options,
      );
    const parsed = await this.#parse(id, path, options.salvage === true);
    const held = (await readSessionLockHolder(join(this.root, `${id}.lock`))) !== undefined;
    return forkStoredSession(this, { parent: parsed.header, events: parsed.events, held }, options);
  }

  async release(session: Session): Promise<void> {
    const live = this.#live.get(session.id);
    session.close();
    if (live === undefined || live.session !== session) return;
    this.#live.delete(session.id);
    try {
      await live.writer.close();
      // A resumed session tallies only what follows its snapshot: its prefix is not read again.
      const tally = tallySession(session.header, session.log, live.prefixTally);
      // The log is complete now: its listing row is cached against the file as it stands, so the next
      // listing (`rein run --continue` lists first) does not parse the whole log again.
      await this.#summaries.cacheTally(session, live.format, tally);
      await this.#saveSnapshot(live, tally);
    } finally {
      await live.lock.release();
    }
  }

  /**
   * Saves the snapshot of a released format 1 session whose every event is on disk and whose last turn
   * is closed: its derived state, and the SHA-256 of the file as it stands (the hash kept since the
   * open, taking only the bytes written since). Best effort: any doubt leaves the old snapshot.
   */
  async #saveSnapshot(live: LiveEntry, tally: SessionTally): Promise<void> {
    const session = live.session;
    if (live.format !== compactLogFormat || session.openTurn !== undefined) return;
    if (live.writer.durableEvents !== session.length) return;
    const covered = await hashAppendedLines(this.pathOf(session.id), live, session.length + 1);
    if (covered === undefined) return;
    await this.#snapshots.write({
      version: sessionSnapshotVersion,
      id: session.id,
      events: session.length,
      bytes: covered.bytes,
      sha256: covered.sha256,
      surface: { nodes: [...session.surfaceNodes], generation: session.replaceGeneration },
      tally,
      scans: session.scans.save(session.length),
      surfaceEvents: snapshotSurfaceEvents(session, live.readEvents),
    });
  }

  async exportLog(id: string): Promise<string> {
    const path = this.pathOf(id);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if (isCode(error, 'ENOENT')) throw notFound(id, path);
      throw ioError(path, error);
    }
    const parsed = parseSessionLog(bytes, { id, path });
    // Exports are full envelopes (format 0), whatever the file's format: what every store reads.
    if (parsed.format === fullEnvelopeFormat) return bytes.toString('utf8', 0, parsed.completeBytes);
    return encodeSessionLog(parsed.header, parsed.events, fullEnvelopeFormat);
  }

  async importLog(text: string, source = 'the imported log'): Promise<SessionHeader> {
    const parsed = parseTransferredLog(text, source);
    const path = this.pathOf(parsed.header.id);
    await this.#ensureRoot();
    if (this.#live.has(parsed.header.id))
      throw new SessionError('SESSION_EXISTS', `session ${parsed.header.id} already exists`);
    try {
      await linkIntoPlace(path, encodeSessionLog(parsed.header, parsed.events, compactLogFormat), {
        sync: true,
      });
      await syncDirectory(this.root);
    } catch (error) {
      if (isCode(error, 'EEXIST'))
        throw new SessionError('SESSION_EXISTS', `session ${parsed.header.id} already exists`);
      throw ioError(path, error);
    }
    return parsed.header;
  }

  /** Forces every buffered event of a live session to disk; resolves with the number of durable events. */
  async flush(session: Session): Promise<number> {
    const live = this.#live.get(session.id);
    if (live === undefined || live.session !== session) {
      throw new SessionError('SESSION_CLOSED', `session ${session.id} is not open for writing in this store`);
    }
    await live.writer.checkpoint('flush');
    return live.writer.durableEvents;
  }

  async #summary(id: string): Promise<SessionSummary | undefined> {
    const live = this.#live.get(id);
    if (live !== undefined) return summarizeSession(live.session.header, live.session.log, this.#pricing);
    return this.#summaries.summaryOf(id);
  }

  async #parse(id: string, path: string, salvage: boolean): Promise<ParsedSessionLog> {
    return parseSessionLog(await this.#readLog(id, path), { id, path, salvage });
  }

  async #readLog(id: string, path: string): Promise<Buffer> {
    try {
      return await readFile(path);
    } catch (error) {
      if (isCode(error, 'ENOENT')) throw notFound(id, path);
      throw ioError(path, error);
    }
  }

  async #assertExists(id: string, path: string): Promise<void> {
    try {
      await stat(path);
    } catch (error) {
      if (isCode(error, 'ENOENT')) throw notFound(id, path);
      throw ioError(path, error);
    }
  }

  async #ensureRoot(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw ioError(this.root, error);
    }
  }

  #lock(id: string): Promise<SessionLock> {
    return SessionLock.acquire(join(this.root, `${id}.lock`), id);
  }

  /** Who holds a session's write lock, if anyone (for displays); reads never need it. */
  async holderOf(id: string): Promise<{ pid: number; host: string; acquiredAt: number } | undefined> {
    checkSessionId(id);
    const holder = await readSessionLockHolder(join(this.root, `${id}.lock`));
    return holder === undefined
      ? undefined
      : { pid: holder.pid, host: holder.host, acquiredAt: holder.acquiredAt };
  }

  #writer(id: string, path: string): SessionFileWriter {
    const onDurable = this.#onDurable;
    return new SessionFileWriter({
      path,
      ...(this.#batchWindowMs !== undefined ? { batchWindowMs: this.#batchWindowMs } : {}),
      ...(this.#durability !== undefined ? { durability: this.#durability } : {}),
      ...(onDurable !== undefined ? { onDurable: (count: number) => onDurable(id, count) } : {}),
    });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false;
    throw ioError(path, error);
  }
}

function notFound(id: string, path: string): SessionError {
  return new SessionError('SESSION_NOT_FOUND', `no session ${id} (${path} does not exist)`);
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await openFile(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
