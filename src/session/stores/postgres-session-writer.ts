import type { Pool } from 'pg';
import type { CheckpointReason, SessionPersistence } from '../session.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { SessionError } from '../session-error.ts';
import { fencedSqlState, errorCodeOf, isTransient, storeError } from './postgres-errors.ts';
import { SessionFencedError, renewLease } from './postgres-lease.ts';
import type { PostgresLease } from './postgres-lease.ts';
import type { SessionDurability } from './session-file-writer.ts';
import { encodeEventLine } from './session-log-format.ts';

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
  onDurable?: (eventCount: number) => void;
}

const settled: Promise<void> = Promise.resolve();

// A batch this large is committed at once rather than waiting for its window.
const maxBatchBytes = 1 << 20;

/**
 * The persistence sink of one live session in PostgreSQL: `write` buffers the exact JSONL line the
 * disk store would write, a timer commits batches in the background, and `checkpoint` commits what is
 * buffered as one transaction that checks the fencing token first (a writer whose lease was taken over
 * stores nothing more). `power-loss` commits wait for the WAL flush at every checkpoint; `process-crash`
 * commits wait for the server at tool checkpoints and for the WAL flush only at turn ends, flushes and
 * close, and leaves request checkpoints to the next batch. A lost connection is retried (the append is
 * idempotent per batch); after the first other failure every later checkpoint rejects with it.
 */
export class PostgresSessionWriter implements SessionPersistence {
  readonly #options: PostgresSessionWriterOptions;
  #pending: string[] = [];
  #pendingBytes = 0;
  #lastTime = 0;
  #stored: number;
  #durable: number;
  #unsyncedCommits = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #renewal: NodeJS.Timeout;
  #chain: Promise<void> = Promise.resolve();
  #queued = 0;
  #failure: SessionError | undefined;
  #closed = false;

  constructor(options: PostgresSessionWriterOptions) {
    this.#options = options;
    this.#stored = options.storedEvents;
    this.#durable = options.storedEvents;
    this.#renewal = setInterval(() => this.#renew(), Math.max(50, Math.floor(options.leaseMs / 3)));
    this.#renewal.unref();
  }

  /** The number of events committed with a WAL flush. */
  get durableEvents(): number {
    return this.#durable;
  }

  /** The first failure (a fence, a lost database), if any. */
  get failure(): SessionError | undefined {
    return this.#failure;
  }

  write(event: AnySessionEvent): void {
    if (this.#failure !== undefined || this.#closed) return;
    const line = encodeEventLine(event);
    // Stored without the newline that terminates a JSONL record; export puts it back.
    this.#pending.push(line.slice(0, -1));
    this.#pendingBytes += line.length;
    this.#lastTime = event.time;
    this.#flushSoon(this.#pendingBytes >= maxBatchBytes ? 0 : this.#options.batchWindowMs);
  }

  checkpoint(reason: CheckpointReason, signal?: AbortSignal): Promise<void> {
    const sync = this.#options.durability === 'power-loss' || reason === 'turn-end' || reason === 'flush';
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#options.durability === 'process-crash' && reason === 'request') {
      // A model request has no side effect to order against: its events go with the next batch (the
      // timer, or the tool or turn-end checkpoint), saving a round trip per step.
      if (this.#pending.length > 0) this.#flushSoon(this.#options.batchWindowMs);
      return settled;
    }
    if (this.#queued === 0 && this.#pending.length === 0 && !(sync && this.#unsyncedCommits)) return settled;
    const done = this.#run(() => this.#commit(sync, signal));
    if (signal === undefined) return done;
    signal.throwIfAborted();
    // The commit goes on in the background; an aborted caller just stops waiting for it.
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void =>
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      done.then(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** Commits `lines` (crash-repair closers) right away with a WAL flush, before the session is handed out. */
  async resume(lines: readonly string[], lastTime: number): Promise<void> {
    // The closers precede what the session appended while it was built (its `session/end-seed`).
    if (this.#pending.length === 0 && lines.length > 0) this.#lastTime = lastTime;
    this.#pending = [...lines, ...this.#pending];
    await this.#run(() => this.#commit(true, undefined));
  }

  /** Commits everything buffered with a WAL flush and stops renewing the lease; rejects with the first failure. */
  async close(): Promise<void> {
    if (this.#closed) return this.#chain;
    const final = this.#run(() => this.#commit(true, undefined));
    this.#closed = true;
    try {
      await final;
    } finally {
      clearInterval(this.#renewal);
      if (this.#timer !== undefined) clearTimeout(this.#timer);
    }
  }

  /** Stops renewing without writing (the store is shutting down after a failure). */
  abandon(): void {
    this.#closed = true;
    clearInterval(this.#renewal);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  #flushSoon(delayMs: number): void {
    if (this.#timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#run(() => this.#commit(false, undefined)).catch(() => {
        // Recorded in #failure; the next checkpoint (before any tool or request) reports it.
      });
    }, delayMs);
  }

  #run(operation: () => Promise<void>): Promise<void> {
    this.#queued++;
    const next = this.#chain.then(async () => {
      try {
        if (this.#failure !== undefined) throw this.#failure;
        try {
          await operation();
        } catch (error) {
          this.#failure ??= this.#translate(error);
          throw this.#failure;
        }
      } finally {
        this.#queued--;
      }
    });
    this.#chain = next.catch(() => {
      // Later operations see #failure and reject on their own.
    });
    return next;
  }

  async #commit(sync: boolean, signal: AbortSignal | undefined): Promise<void> {
    if (this.#pending.length === 0 && !(sync && this.#unsyncedCommits)) return;
    const lines = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    const { pool, schema, lease, leaseMs, channel, retryMs } = this.#options;
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        await pool.query(`select ${schema}.append_events($1, $2, $3, $4, $5, $6, $7, $8)`, [
          lease.sessionId,
          lease.token,
          this.#stored,
          lines,
          this.#lastTime,
          leaseMs,
          sync,
          channel,
        ]);
        break;
      } catch (error) {
        // Retries stop at the deadline, or when the caller no longer waits (the batch stays unsent).
        if (!isTransient(error) || Date.now() - started >= retryMs || signal?.aborted === true) {
          this.#pending = lines.concat(this.#pending);
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
      }
    }
    this.#stored += lines.length;
    if (sync) {
      this.#durable = this.#stored;
      this.#unsyncedCommits = false;
      this.#options.onDurable?.(this.#durable);
    } else {
      this.#unsyncedCommits = true;
    }
  }

  #renew(): void {
    if (this.#closed || this.#failure !== undefined) return;
    const { pool, schema, lease, leaseMs } = this.#options;
    renewLease(pool, schema, lease, leaseMs).then(
      (held) => {
        if (!held)
          this.#failure ??= new SessionFencedError(
            lease.sessionId,
            lease.token,
            'lease renewal found it gone',
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
