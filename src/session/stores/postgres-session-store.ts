import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { HookBus } from '../../hooks/index.ts';
import { Session } from '../session.ts';
import type { SessionHeader } from '../session.ts';
import type { SessionPersistence } from '../session-persistence.ts';
import { SessionError } from '../session-error.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { forkStoredSession } from '../session-fork.ts';
import type {
  SessionFollowOptions,
  SessionForkOptions,
  SessionStore,
  SessionSummary,
  StoredSessionLog,
} from '../session-store.ts';
import { summarizeSession } from '../session-summary.ts';
import { storeError } from './postgres-errors.ts';
import { PostgresFollower } from './postgres-follower.ts';
import { acquireLease, leaseHolderOf, releaseLease } from './postgres-lease.ts';
import type { PostgresLease } from './postgres-lease.ts';
import type { PostgresSchemaState } from './postgres-schema.ts';
import { connectPostgresPool } from './postgres-session-store-options.ts';
import type { PostgresSessionStoreOptions } from './postgres-session-store-options.ts';
import { insertSessionRows, selectSessionLogText } from './postgres-session-rows.ts';
import type { StoredSessionLogText } from './postgres-session-rows.ts';
import { runInTransaction } from './postgres-transaction.ts';
import { PostgresSessionWriter } from './postgres-session-writer.ts';
import { SessionLockedError } from './session-lock.ts';
import type { SessionLockHolder } from './session-lock.ts';
import type { ParsedSessionLog, SessionLogFormat } from './session-log-format.ts';
import { checkFormat, loadPostgresSession, readPostgresLog } from './postgres-loaded-session.ts';
import { readSnapshotRow, saveSnapshotRow } from './postgres-session-snapshots.ts';
import type { CoveredLog } from './postgres-session-snapshots.ts';
import {
  compactLogFormat,
  encodeHeaderLine,
  encodeSessionLog,
  fullEnvelopeFormat,
  lineEncoder,
  parseSessionLog,
  sessionLogVersion,
} from './session-log-format.ts';
import { parseTransferredLog } from './session-log-transfer.ts';
import { checkSessionId, constructStoredSession } from './stored-session.ts';

interface LiveEntry {
  session: Session;
  writer: PostgresSessionWriter;
  lease: PostgresLease;
  format: SessionLogFormat;
  /** What the log held when it was opened or created, for its snapshot at release. */
  covered: CoveredLog;
}

const settled: Promise<void> = Promise.resolve();

/**
 * Sessions in PostgreSQL, for several servers sharing one database: one row per session (its header
 * line and its format), one row per committed batch holding its events' lines exactly as the disk
 * store writes them (format 1, compact, for new sessions; format 0 for sessions stored before schema
 * version 4, which keep it), each batch appended in one transaction. One writer per session across
 * servers: a lease row with an expiry and a fencing token, copied into the session row where every
 * append transaction checks it, so a writer whose lease was taken over (paused, partitioned) can never
 * append again. Reads never take the lease.
 */
export class PostgresSessionStore implements SessionStore {
  /** The database, for messages: the URL without its password. */
  readonly where: string;
  readonly schema: string;
  readonly leaseMs: number;
  /** What the schema check found when the store connected. */
  readonly schemaState: PostgresSchemaState;
  readonly #pool: Pool;
  readonly #options: PostgresSessionStoreOptions;
  readonly #live = new Map<string, LiveEntry>();
  readonly #summaries = new Map<string, { events: number; summary: SessionSummary }>();
  readonly #follower: PostgresFollower;
  readonly #channel: string;
  #hooks: HookBus | undefined;
  #closed = false;

  private constructor(
    pool: Pool,
    options: PostgresSessionStoreOptions,
    where: string,
    schema: string,
    leaseMs: number,
    state: PostgresSchemaState,
  ) {
    this.#pool = pool;
    this.#options = options;
    this.where = where;
    this.schema = schema;
    this.leaseMs = leaseMs;
    this.schemaState = state;
    this.#channel = `${schema}_events`;
    this.#follower = new PostgresFollower({ pool, schema, channel: this.#channel });
  }

  /**
   * Connects, then creates or migrates the schema. Throws SessionError naming the problem: `STORE_URL`
   * (not a postgres:// URL), `STORE_UNREACHABLE`, `STORE_AUTH`, `STORE_FOREIGN` (a schema that is not
   * Rein's), `SESSION_VERSION` (a newer schema), `STORE_READ_ONLY` (a replica without Rein's schema).
   */
  static async connect(options: PostgresSessionStoreOptions): Promise<PostgresSessionStore> {
    const { pool, where, schema, leaseMs, state } = await connectPostgresPool(options);
    return new PostgresSessionStore(pool, options, where, schema, leaseMs, state);
  }

  /** Attaches the hook bus live sessions publish on. */
  bind(hooks: HookBus): void {
    this.#hooks = hooks;
  }

  async create(
    header: Omit<SessionHeader, 'version' | 'createdAt'> & { createdAt?: number },
    options: { seed?: readonly AnySessionEvent[] } = {},
  ): Promise<Session> {
    checkSessionId(header.id);
    this.#assertWritable();
    if (this.#live.has(header.id)) throw exists(header.id);
    const fullHeader: SessionHeader = {
      ...header,
      version: sessionLogVersion,
      createdAt: header.createdAt ?? Date.now(),
    };
    if (options.seed !== undefined) fullHeader.seedLength = options.seed.length;
    // Built first, so that the seed is validated before anything is written; what the session appends
    // while it is built (its `session/end-seed`) waits here until the writer exists.
    const early: AnySessionEvent[] = [];
    const buffer: SessionPersistence = { write: (event) => early.push(event), checkpoint: () => settled };
    const session = constructStoredSession({
      header: fullHeader,
      seed: options.seed,
      persistence: buffer,
      hooks: this.#hooks,
      untouched: 'nothing was changed',
    });
    const seedLength = options.seed?.length ?? 0;
    // New sessions are written in the disk store's current format, with its encoder.
    const encoder = lineEncoder(compactLogFormat, fullHeader.createdAt);
    const lines: string[] = [];
    for (const event of session.log.slice(0, seedLength)) lines.push(encoder.encode(event).slice(0, -1));
    const headerLine = encodeHeaderLine(fullHeader, compactLogFormat);
    let lease: PostgresLease;
    try {
      lease = await this.#transaction(async (client) => {
        await insertSessionRows(client, this.schema, {
          id: fullHeader.id,
          format: compactLogFormat,
          headerLine: headerLine.slice(0, -1),
          createdAt: fullHeader.createdAt,
          updatedAt: lines.length > 0 ? session.log.at(seedLength - 1)!.time : fullHeader.createdAt,
          lines,
        });
        return acquireLease(client, this.schema, fullHeader.id, this.leaseMs);
      });
    } catch (error) {
      session.close();
      throw error;
    }
    const writer = this.#writer(lease, lines.length);
    writer.encodeWith(encoder);
    for (const event of early) writer.write(event);
    session.attachPersistence(writer);
    // The stored text so far: the header line, then the seed's lines (what the rows concatenate to).
    const stored = headerLine + lines.map((line) => `${line}\n`).join('');
    const covered: CoveredLog = {
      hash: createHash('sha256').update(stored, 'utf8'),
      hashedBytes: Buffer.byteLength(stored, 'utf8'),
      hashedEvents: lines.length,
      readEvents: 0,
      prefixTally: undefined,
    };
    this.#live.set(header.id, { session, writer, lease, format: compactLogFormat, covered });
    return session;
  }

  async open(id: string): Promise<Session> {
    checkSessionId(id);
    this.#assertWritable();
    const live = this.#live.get(id);
    if (live !== undefined) throw new SessionLockedError(id, live.lease.holder);
    await this.#assertExists(id);
    const lease = await this.#query(() => acquireLease(this.#pool, this.schema, id, this.leaseMs));
    let entry: LiveEntry;
    try {
      entry = await this.#load(id, lease);
    } catch (error) {
      await releaseLease(this.#pool, this.schema, lease).catch(() => {
        // The lease expires on its own; the load error is what the caller needs.
      });
      throw error;
    }
    this.#live.set(id, entry);
    return entry.session;
  }

  /** Reads a stored session for writing (see `loadPostgresSession`). */
  async #load(id: string, lease: PostgresLease): Promise<LiveEntry> {
    const loaded = await loadPostgresSession(await this.#logText(id), {
      id,
      path: this.#path,
      readSnapshot: () => readSnapshotRow(this.#pool, this.schema, id),
      makeWriter: (storedEvents) => this.#writer(lease, storedEvents),
      hooks: this.#hooks,
    });
    return { ...loaded, lease };
  }

  async read(id: string): Promise<{ header: SessionHeader; events: AnySessionEvent[] }> {
    checkSessionId(id);
    const live = this.#live.get(id);
    if (live !== undefined) return { header: { ...live.session.header }, events: live.session.log.slice() };
    const parsed = await this.#parse(id, false);
    return { header: parsed.header, events: parsed.events };
  }

  async readLog(id: string): Promise<StoredSessionLog> {
    checkSessionId(id);
    const live = this.#live.get(id);
    if (live !== undefined) return { header: { ...live.session.header }, log: live.session.log, scans: {} };
    return readPostgresLog(await this.#logText(id), {
      id,
      path: this.#path,
      readSnapshot: () => readSnapshotRow(this.#pool, this.schema, id),
    });
  }

  async list(): Promise<SessionSummary[]> {
    const rows = await this.#query(
      async () =>
        (
          await this.#pool.query<{ id: string; events: string }>(
            `select id, event_count::text as events from ${this.schema}.sessions`,
          )
        ).rows,
    );
    const summaries: SessionSummary[] = [];
    for (const row of rows) {
      const summary = await this.#summary(row.id, Number(row.events));
      if (summary !== undefined) summaries.push(summary);
    }
    return summaries.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async delete(id: string): Promise<void> {
    checkSessionId(id);
    this.#assertWritable();
    const live = this.#live.get(id);
    if (live !== undefined) throw new SessionLockedError(id, live.lease.holder, 'dispose its agent first');
    await this.#assertExists(id);
    await this.#transaction(async (client) => {
      // Taking the lease first refuses a session another server holds, and blocks a takeover meanwhile.
      await acquireLease(client, this.schema, id, this.leaseMs);
      await client.query(`delete from ${this.schema}.event_batches where session_id = $1`, [id]);
      await client.query(`delete from ${this.schema}.session_snapshots where session_id = $1`, [id]);
      await client.query(`delete from ${this.schema}.sessions where id = $1`, [id]);
    });
    this.#summaries.delete(id);
  }

  async fork(id: string, options: SessionForkOptions = {}): Promise<SessionHeader> {
    checkSessionId(id);
    const live = this.#live.get(id);
    if (live !== undefined)
      return forkStoredSession(
        this,
        { parent: live.session.header, events: live.session.events, held: true },
        options,
      );
    const parsed = await this.#parse(id, options.salvage === true);
    const held = (await this.holderOf(id)) !== undefined;
    return forkStoredSession(this, { parent: parsed.header, events: parsed.events, held }, options);
  }

  async release(session: Session): Promise<void> {
    const live = this.#live.get(session.id);
    session.close();
    if (live === undefined || live.session !== session) return;
    this.#live.delete(session.id);
    try {
      await live.writer.close();
      if (live.format === compactLogFormat && live.writer.durableEvents === session.length)
        await saveSnapshotRow(this.#pool, this.schema, session, live.covered);
    } finally {
      // A fenced writer's token no longer matches: the release then changes nothing.
      await releaseLease(this.#pool, this.schema, live.lease).catch(() => {
        // The database is unreachable: the lease expires on its own after `leaseMs`.
      });
    }
  }

  /** Commits every buffered event of a live session with a WAL flush; resolves with the durable count. */
  async flush(session: Session): Promise<number> {
    const live = this.#live.get(session.id);
    if (live === undefined || live.session !== session) {
      throw new SessionError('SESSION_CLOSED', `session ${session.id} is not open for writing in this store`);
    }
    await live.writer.checkpoint('flush');
    return live.writer.durableEvents;
  }

  async exportLog(id: string): Promise<string> {
    checkSessionId(id);
    const stored = await this.#logText(id);
    // Exports are full envelopes (format 0), whatever the session's format, as from the disk store.
    if (stored.format === fullEnvelopeFormat) return stored.text;
    const parsed = this.#parseText(id, stored, false);
    return encodeSessionLog(parsed.header, parsed.events, fullEnvelopeFormat);
  }

  async importLog(text: string, source = 'the imported log'): Promise<SessionHeader> {
    this.#assertWritable();
    const parsed = parseTransferredLog(text, source);
    const { header, events } = parsed;
    checkSessionId(header.id);
    if (this.#live.has(header.id)) throw exists(header.id);
    // Stored in the disk store's current format, as its own import writes the file.
    const encoder = lineEncoder(compactLogFormat, header.createdAt);
    const lines = events.map((event) => encoder.encode(event).slice(0, -1));
    await this.#transaction((client) =>
      insertSessionRows(client, this.schema, {
        id: header.id,
        format: compactLogFormat,
        headerLine: encodeHeaderLine(header, compactLogFormat).slice(0, -1),
        createdAt: header.createdAt,
        updatedAt: events.at(-1)?.time ?? header.createdAt,
        lines,
      }),
    );
    return header;
  }

  /** Who holds a session's write lease, if anyone (for displays); reads never need it. */
  async holderOf(id: string): Promise<SessionLockHolder | undefined> {
    checkSessionId(id);
    return this.#query(() => leaseHolderOf(this.#pool, this.schema, id));
  }

  follow(id: string, options: SessionFollowOptions): void {
    checkSessionId(id);
    this.#follower.follow(id, options);
  }

  /** Closes the connections; live sessions must be released first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const live of this.#live.values()) live.writer.abandon();
    await this.#follower.close();
    await this.#pool.end();
  }

  /** Runs one query on a pooled connection (for doctor checks and tools); failures as SessionError. */
  async query<Row extends object>(text: string, values: unknown[] = []): Promise<Row[]> {
    return this.#query(async () => (await this.#pool.query<Row & QueryResultRow>(text, values)).rows);
  }

  async #summary(id: string, eventCount: number): Promise<SessionSummary | undefined> {
    const live = this.#live.get(id);
    if (live !== undefined)
      return summarizeSession(live.session.header, live.session.events, this.#options.pricing);
    const cached = this.#summaries.get(id);
    if (cached !== undefined && cached.events === eventCount) return cached.summary;
    try {
      const parsed = await this.#parse(id, true);
      const summary = summarizeSession(parsed.header, parsed.events, this.#options.pricing);
      if (parsed.corrupt !== undefined)
        summary.corrupt = { line: parsed.corrupt.line, offset: parsed.corrupt.offset };
      this.#summaries.set(id, { events: eventCount, summary });
      return summary;
    } catch (error) {
      // A session deleted meanwhile, or a newer format, has no row; `read` reports why.
      if (error instanceof SessionError && error.code !== 'STORE_UNREACHABLE') return undefined;
      throw error;
    }
  }

  async #parse(id: string, salvage: boolean): Promise<ParsedSessionLog> {
    return this.#parseText(id, await this.#logText(id), salvage);
  }

  #parseText(id: string, stored: StoredSessionLogText, salvage: boolean): ParsedSessionLog {
    // The rows are the disk format's lines: the disk parser validates them the same way.
    const parsed = parseSessionLog(Buffer.from(stored.text, 'utf8'), { id, path: this.#path, salvage });
    checkFormat(id, this.#path, stored.format, parsed.format);
    return parsed;
  }

  /** Where a session's rows are, for error messages. */
  get #path(): string {
    return `${this.where} (${this.schema}.events)`;
  }

  async #logText(id: string): Promise<StoredSessionLogText> {
    const text = await this.#query(() => selectSessionLogText(this.#pool, this.schema, id));
    if (text === undefined) throw notFound(id, this.where);
    return text;
  }

  async #assertExists(id: string): Promise<void> {
    const rows = await this.query(`select 1 from ${this.schema}.sessions where id = $1`, [id]);
    if (rows.length === 0) throw notFound(id, this.where);
  }

  #assertWritable(): void {
    if (this.schemaState.readOnly) {
      throw new SessionError(
        'STORE_READ_ONLY',
        `${this.where} is read-only (a replica, or default_transaction_read_only is on): ` +
          'sessions can be read and listed there, not written; point REIN_STORE at the primary',
      );
    }
  }

  async #query<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw storeError(error, this.where);
    }
  }

  #transaction<T>(run: (client: PoolClient) => Promise<T>): Promise<T> {
    return runInTransaction(this.#pool, this.where, run);
  }

  #writer(lease: PostgresLease, storedEvents: number): PostgresSessionWriter {
    const onDurable = this.#options.onDurable;
    const id = lease.sessionId;
    return new PostgresSessionWriter({
      pool: this.#pool,
      schema: this.schema,
      lease,
      leaseMs: this.leaseMs,
      where: this.where,
      channel: this.#channel,
      storedEvents,
      batchWindowMs: this.#options.batchWindowMs ?? 100,
      durability: this.#options.durability ?? 'power-loss',
      retryMs: this.#options.retryMs ?? 15_000,
      notifyIntervalMs: this.#options.notifyIntervalMs ?? 50,
      ...(onDurable !== undefined ? { onDurable: (count: number) => onDurable(id, count) } : {}),
    });
  }
}

function exists(id: string): SessionError {
  return new SessionError('SESSION_EXISTS', `session ${id} already exists`);
}

function notFound(id: string, where: string): SessionError {
  return new SessionError('SESSION_NOT_FOUND', `no session ${id} in ${where}`);
}
