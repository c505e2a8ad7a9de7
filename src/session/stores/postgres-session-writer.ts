import type { Pool } from 'pg';
import type { CheckpointReason, SessionPersistence } from '../session-persistence.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { eventEntry } from '../packed-event.ts';
import { SessionError } from '../session-error.ts';
import { fencedSqlState, errorCodeOf, isTransient, storeError } from './postgres-errors.ts';
import { SessionFencedError, renewLease } from './postgres-lease.ts';
import type { PostgresLease } from './postgres-lease.ts';
import { CheckpointBatcher } from './checkpoint-batcher.ts';
import { withPooledConnection } from './postgres-connection.ts';
import type { SessionDurability } from './checkpoint-batcher.ts';
import type { SessionLineEncoder } from './compact-log-codec.ts';
import { LineBytes } from './line-bytes.ts';

/** Options of one live session's PostgreSQL writer. */
export interface PostgresSessionWriterOptions {
  pool: Pool;
  schema: string;
  lease: PostgresLease;
  leaseMs: number;
  /** The database, for error messages (never the password). */
  where: string;
  /** The NOTIFY channel followers listen on. */
  channel: string;
  /** Events already stored (where the next append goes). */
  storedEvents: number;
  batchWindowMs: number;
  durability: SessionDurability;
  /** How long a lost connection is retried before a checkpoint fails. */
  retryMs: number;
  /**
   * The least time between two NOTIFYs of commits that are not synced (synced ones always notify);
   * one that falls sooner is sent late by a timer. 0 notifies every commit.
   */
  notifyIntervalMs: number;
  onDurable?: (eventCount: number) => void;
}

/**
 * The persistence sink of one live session in PostgreSQL: `write` buffers the event's line in the
 * session's format (the disk store's encoder, continuing the state of the lines stored before), and
 * the shared checkpoint batcher commits batches,
 * each one row in one transaction that checks the fencing token first (a writer whose lease was taken
 * over stores nothing more). A commit
 * that must survive a machine crash waits for the WAL flush; one that must survive this process waits
 * for the server's commit (`synchronous_commit = off`). Followers are woken by a NOTIFY with every
 * synced commit and at most once per `notifyIntervalMs` otherwise; a commit whose NOTIFY was skipped
 * arms a timer that sends it at the end of the interval, so no commit stays unannounced. A lost
 * connection is retried (the append is idempotent per batch); after the first other failure every
 * later checkpoint rejects with it.
 */
export class PostgresSessionWriter implements SessionPersistence {
  readonly #options: PostgresSessionWriterOptions;
  readonly #batch: CheckpointBatcher;
  #encoder: SessionLineEncoder | undefined;
  // Events written before the encoder was given (the session's own while it is built), in seq order.
  readonly #early: AnySessionEvent[] = [];
  #lastTime = 0;
  #stored: number;
  #durable: number;
  readonly #renewal: NodeJS.Timeout;
  // When the last NOTIFY was sent (performance.now), and the timer of one owed since.
  #notifiedAt = Number.NEGATIVE_INFINITY;
  // The encoded lines of the next commit, as UTF-8: the batch row's text is made from them once.
  readonly #lines = new LineBytes();
  // Crash-repair closers (`resume`), which precede every line written: committed first, then cleared.
  #closers = '';
  #lateNotify: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: PostgresSessionWriterOptions) {
    this.#options = options;
    this.#stored = options.storedEvents;
    this.#durable = options.storedEvents;
    this.#batch = new CheckpointBatcher(
      {
        store: (sync, signal, events) => this.#commit(sync, signal, events),
        failure: (error) => this.#translate(error),
      },
      {
        batchWindowMs: options.batchWindowMs,
        durability: options.durability,
      },
    );
    this.#renewal = setInterval(() => this.#renew(), Math.max(50, Math.floor(options.leaseMs / 3)));
    this.#renewal.unref();
  }

  /** The number of events committed with a WAL flush. */
  get durableEvents(): number {
    return this.#durable;
  }

  /** The first failure (a fence, a lost database), if any. */
  get failure(): SessionError | undefined {
    return this.#batch.failure as SessionError | undefined;
  }

  /**
   * Encodes writes with `encoder` (the session's format, its state past every line stored or about to
   * be resumed), starting with those that came before it. Until then writes wait unencoded.
   */
  encodeWith(encoder: SessionLineEncoder): void {
    this.#encoder = encoder;
    for (const event of this.#early.splice(0)) this.write(event);
  }

  write(event: AnySessionEvent, packedKind: number = eventEntry): void {
    if (this.#closed) return;
    if (this.#encoder === undefined) {
      this.#early.push(event);
      return;
    }
    // With the newline that ends a JSONL record: a batch row's text is its lines concatenated. Every
    // event written here is one `Session.append` committed (as in the disk store's writer), so the
    // encoder need not check its envelope.
    const lines = this.#lines;
    const start = lines.length;
    this.#encoder.encodeInto(lines, event, true, packedKind);
    // After a failure nothing more is committed: the line is dropped as the batcher drops it.
    if (!this.#batch.added(1, lines.length - start)) lines.truncate(start);
    this.#lastTime = event.time;
  }

  checkpoint(reason: CheckpointReason, signal?: AbortSignal): Promise<void> {
    return this.#batch.checkpoint(reason, signal);
  }

  /**
   * Commits `lines` (crash-repair closers in the session's format, each ending in its newline, encoded
   * before `encodeWith` got the encoder) right away with a WAL flush, before the session is handed out.
   */
  async resume(lines: readonly string[], lastTime: number): Promise<void> {
    // The closers precede what the session appended while it was built (its `session/end-seed`).
    if (this.#lastTime === 0 && lines.length > 0) this.#lastTime = lastTime;
    this.#closers = lines.join('');
    this.#batch.added(lines.length, this.#closers.length);
    await this.#batch.storeAll();
  }

  /** Commits everything buffered with a WAL flush and stops renewing the lease; rejects with the first failure. */
  async close(): Promise<void> {
    this.#closed = true;
    try {
      await this.#batch.close();
    } finally {
      clearInterval(this.#renewal);
      // The closing commit notified if it stored anything; a NOTIFY still owed goes now.
      if (this.#lateNotify !== undefined) await this.#notifyLate();
    }
  }

  /** Stops renewing without writing (the store is shutting down after a failure). */
  abandon(): void {
    this.#closed = true;
    clearInterval(this.#renewal);
    clearTimeout(this.#lateNotify);
    this.#lateNotify = undefined;
    this.#batch.abandon();
  }

  async #commit(sync: boolean, signal: AbortSignal | undefined, events: number): Promise<void> {
    const { pool, schema, lease, channel, retryMs, notifyIntervalMs } = this.#options;
    // Taken before the first await: lines written meanwhile belong to the next commit.
    const text = this.#closers === '' ? this.#lines.text() : this.#closers + this.#lines.text();
    this.#closers = '';
    this.#lines.clear();
    const started = Date.now();
    const owed = events > 0 || this.#lateNotify !== undefined;
    const notify = owed && (sync || performance.now() - this.#notifiedAt >= notifyIntervalMs);
    for (let attempt = 0; ; attempt++) {
      try {
        // A named statement: each pooled connection parses and plans the call once, not once a commit.
        await withPooledConnection(pool, (client) =>
          client.query({
            name: `rein-append-${schema}`,
            text: `select ${schema}.append_events($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            values: [
              lease.sessionId,
              lease.token,
              this.#stored,
              events,
              text,
              this.#lastTime,
              sync,
              notify,
              channel,
            ],
          }),
        );
        break;
      } catch (error) {
        // Retries stop at the deadline, or when the caller no longer waits.
        if (!isTransient(error) || Date.now() - started >= retryMs || signal?.aborted === true) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
      }
    }
    this.#stored += events;
    if (notify) {
      this.#notifiedAt = performance.now();
      clearTimeout(this.#lateNotify);
      this.#lateNotify = undefined;
    } else if (owed && this.#lateNotify === undefined) {
      // Armed while closing too: the closing sync commit, or `close` itself, sends what is owed.
      const wait = Math.max(0, this.#notifiedAt + notifyIntervalMs - performance.now());
      this.#lateNotify = setTimeout(() => void this.#notifyLate(), wait);
    }
    if (sync) {
      this.#durable = this.#stored;
      this.#options.onDurable?.(this.#durable);
    }
  }

  /** Sends the NOTIFY owed for commits whose own was skipped (its payload: the events stored now). */
  async #notifyLate(): Promise<void> {
    clearTimeout(this.#lateNotify);
    this.#lateNotify = undefined;
    this.#notifiedAt = performance.now();
    const { pool, lease, channel } = this.#options;
    await pool
      .query('select pg_notify($1, $2)', [channel, `${lease.sessionId} ${this.#stored}`])
      .catch(() => {
        // The database is unreachable: followers catch up at their next poll or reconnect.
      });
  }

  #renew(): void {
    if (this.#closed || this.#batch.failure !== undefined) return;
    const { pool, schema, lease, leaseMs } = this.#options;
    renewLease(pool, schema, lease, leaseMs).then(
      (held) => {
        if (!held)
          this.#batch.fail(
            new SessionFencedError(lease.sessionId, lease.token, 'lease renewal found it gone'),
          );
      },
      () => {
        // An unreachable database: the next append retries and reports it; a lease is only lost to a takeover.
      },
    );
  }

  #translate(error: unknown): SessionError {
    const { lease, where } = this.#options;
    if (error instanceof SessionError) return error;
    if (errorCodeOf(error) === fencedSqlState) {
      return new SessionFencedError(lease.sessionId, lease.token, 'the append was refused by the fence', {
        cause: error,
      });
    }
    return storeError(error, where);
  }
}
