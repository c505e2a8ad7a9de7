import { checkpointDone } from '../session-persistence.ts';
import type { CheckpointReason } from '../session-persistence.ts';

/**
 * How far a checkpoint goes. `power-loss` (default): what must be durable is forced to storage
 * (fdatasync, a WAL flush), so it survives a machine crash. `process-crash`: it is handed to the OS or
 * the database server (which survives the process being killed), turn ends included; only flushes
 * (`store.flush`, a message acknowledged to a remote client) and closes force it to storage.
 */
export type SessionDurability = 'power-loss' | 'process-crash';

/** Where a batcher's batches go: a session file, a database. */
export interface BatchSink {
  /**
   * Stores the lines the sink buffered and counted with `added` (`events` of them, possibly none) where a
   * killed process cannot lose them; with `sync`, also forces everything stored so far to storage.
   * Returning nothing means it finished synchronously.
   */
  store(sync: boolean, signal: AbortSignal | undefined, events: number): Promise<void> | void;
  /** The typed error a failure of `store` (or of an owner's operation) becomes. */
  failure(error: unknown): Error;
  /**
   * Encodes (and counts with `added`) whatever the sink still holds back unencoded; called before every
   * checkpoint, store and close, so nothing held is left out of them.
   */
  drain?(): void;
}

/** Options of a checkpoint batcher. */
export interface CheckpointBatcherOptions {
  /** How long lines may wait in memory before a background store, and a request's lines for their sync. */
  batchWindowMs: number;
  durability: SessionDurability;
}

// What a checkpoint with nothing to wait for answers (the session then skips the await).
const settled: Promise<void> = checkpointDone;

// A batch this large is stored at once rather than waiting for its window.
const maxBatchBytes = 1 << 20;

/**
 * The checkpoint policy and batching shared by the session stores' writers: the sink buffers its lines
 * synchronously and counts them here (`added`), and they are stored in the background after the batch
 * window; every store operation runs on
 * one chain, in order. A `request` checkpoint never waits (the request has no side effect): the lines
 * go with the next batch and, under `power-loss`, a sync follows within the window unless a waiting
 * checkpoint syncs first. `tool` and `turn-end` wait for the store (and, under `power-loss`, the
 * sync); `flush` always waits for the sync. After the first failure every later checkpoint rejects with it.
 */
export class CheckpointBatcher {
  readonly #sink: BatchSink;
  readonly #batchWindowMs: number;
  readonly #durability: SessionDurability;
  #pendingEvents = 0;
  #pendingBytes = 0;
  // Lines were stored since the last sync.
  #unsynced = false;
  #storeTimer: NodeJS.Timeout | undefined;
  #storeImmediately = false;
  #syncTimer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = settled;
  // Operations started and not finished yet.
  #queued = 0;
  #failure: Error | undefined;
  #closed = false;

  constructor(sink: BatchSink, options: CheckpointBatcherOptions) {
    this.#sink = sink;
    this.#batchWindowMs = options.batchWindowMs;
    this.#durability = options.durability;
  }

  /** The first failure, if any. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /** Records a failure found outside a store (a lost lease): every later checkpoint rejects with it. */
  fail(error: Error): void {
    this.#failure ??= error;
  }

  /**
   * Counts `events` lines of `bytes` that the sink buffered (it stores them when `store` is called):
   * they are stored within the batch window, or at once past the batch size bound. False after a
   * failure or close, when they are not counted and the sink should drop them.
   */
  added(events: number, bytes: number): boolean {
    if (this.#failure !== undefined || this.#closed) return false;
    this.#pendingEvents += events;
    this.#pendingBytes += bytes;
    this.#storeSoon(this.#pendingBytes >= maxBatchBytes ? 0 : this.#batchWindowMs);
    return true;
  }

  /**
   * Promises lines the sink holds back (see `BatchSink.drain`): they are stored within the batch
   * window like added ones. Ignored after a failure or close.
   */
  expect(): void {
    if (this.#failure !== undefined || this.#closed) return;
    this.#storeSoon(this.#batchWindowMs);
  }

  /** Applies the checkpoint policy for `reason`; an aborted `signal` stops the wait, not the store. */
  checkpoint(reason: CheckpointReason, signal?: AbortSignal): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    this.#sink.drain?.();
    if (reason === 'request') {
      const unsynced = this.#pendingEvents > 0 || this.#unsynced || this.#queued > 0;
      if (this.#durability === 'power-loss' && this.#syncTimer === undefined && unsynced && !this.#closed)
        this.#syncSoon();
      return settled;
    }
    // Under `process-crash` a turn end is stored like a tool checkpoint (the mode's promise); only an
    // explicit flush forces storage in both modes.
    const sync = reason === 'flush' || this.#durability === 'power-loss';
    if (this.#queued === 0 && this.#pendingEvents === 0 && !(sync && this.#unsynced)) return settled;
    // The closures live in methods of their own (#syncSoon, #storeOnChain, untilDoneOrAborted), so a
    // checkpoint allocates no context for them: every step's request checkpoint returns above.
    const done = this.#storeOnChain(sync, signal);
    if (signal === undefined || done === settled) return done;
    return untilDoneOrAborted(done, signal);
  }

  /** Stores and syncs everything buffered now, on the chain; rejects with the first failure. */
  storeAll(): Promise<void> {
    return this.run(() => this.#store(true, undefined));
  }

  /**
   * Runs an operation of the owner (creating the file, a repair) or a store on the chain, after
   * everything queued before it; when nothing is queued it starts at once, and an operation that
   * finishes synchronously answers with a settled promise (no async round trip).
   */
  run(operation: () => Promise<void> | void): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#queued === 0) {
      let result: Promise<void> | void;
      try {
        result = operation();
      } catch (error) {
        return Promise.reject(this.#fail(error));
      }
      if (result === undefined) return settled;
      return this.#track(result);
    }
    return this.#track(
      this.#chain.then(() => {
        if (this.#failure !== undefined) throw this.#failure;
        return operation();
      }),
    );
  }

  /** Stores and syncs what is buffered, then stops; rejects with the first failure. */
  async close(): Promise<void> {
    if (this.#closed) return this.#chain;
    this.#sink.drain?.();
    const final = this.storeAll();
    this.#closed = true;
    try {
      await final;
    } finally {
      this.#stopTimers();
      await this.#chain;
    }
  }

  /** Stops without storing (the owner is shutting down after a failure). */
  abandon(): void {
    this.#closed = true;
    this.#stopTimers();
  }

  #syncSoon(): void {
    this.#syncTimer = setTimeout(() => {
      this.#syncTimer = undefined;
      this.run(() => this.#store(true, undefined)).catch(() => {
        // Recorded in #failure; the next checkpoint (before anything with a side effect) reports it.
      });
    }, this.#batchWindowMs);
  }

  #storeOnChain(sync: boolean, signal: AbortSignal | undefined): Promise<void> {
    return this.run(() => this.#store(sync, signal));
  }

  #track(operation: Promise<void>): Promise<void> {
    this.#queued++;
    const next = operation.then(
      () => {
        this.#queued--;
      },
      (error: unknown) => {
        this.#queued--;
        throw this.#fail(error);
      },
    );
    this.#chain = next.catch(() => {
      // Later operations see #failure and reject on their own.
    });
    return next;
  }

  #fail(error: unknown): Error {
    this.#failure ??= this.#sink.failure(error);
    return this.#failure;
  }

  #store(sync: boolean, signal: AbortSignal | undefined): Promise<void> | void {
    if (!this.#closed) this.#sink.drain?.();
    const events = this.#pendingEvents;
    if (events === 0 && !(sync && this.#unsynced)) return;
    this.#pendingEvents = 0;
    this.#pendingBytes = 0;
    if (sync && this.#syncTimer !== undefined) {
      // This sync covers the request lines the timer was waiting for.
      clearTimeout(this.#syncTimer);
      this.#syncTimer = undefined;
    }
    const stored = this.#sink.store(sync, signal, events);
    if (stored === undefined) {
      this.#unsynced = !sync && (this.#unsynced || events > 0);
      return;
    }
    return stored.then(() => {
      this.#unsynced = !sync && (this.#unsynced || events > 0);
    });
  }

  #storeSoon(delayMs: number): void {
    if (this.#storeTimer !== undefined) {
      // Every count past the size bound asks again until the store runs: one immediate timer is enough.
      if (delayMs > 0 || this.#storeImmediately) return;
      clearTimeout(this.#storeTimer);
    }
    this.#storeImmediately = delayMs === 0;
    this.#storeTimer = setTimeout(() => {
      this.#storeTimer = undefined;
      this.#storeImmediately = false;
      this.run(() => this.#store(false, undefined)).catch(() => {
        // Recorded in #failure; the next checkpoint (before anything with a side effect) reports it.
      });
    }, delayMs);
  }

  #stopTimers(): void {
    if (this.#storeTimer !== undefined) clearTimeout(this.#storeTimer);
    this.#storeImmediately = false;
    if (this.#syncTimer !== undefined) clearTimeout(this.#syncTimer);
    this.#storeTimer = undefined;
    this.#syncTimer = undefined;
  }
}

/** `done`, or a rejection once `signal` aborts first; the store itself goes on in the background. */
function untilDoneOrAborted(done: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
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

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}
