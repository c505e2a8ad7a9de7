import { constants, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CheckpointReason, SessionPersistence } from '../session.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { linkIntoPlace } from './link-into-place.ts';
import { fullEnvelopeEncoder } from './compact-log-codec.ts';
import type { SessionLineEncoder } from './compact-log-codec.ts';
import { ioError } from './session-io-error.ts';

/** Options of a session file writer. */
export interface SessionFileWriterOptions {
  path: string;
  /** How long appended events may wait in memory before a background write; 100 ms by default. */
  batchWindowMs?: number;
  /** Called after each successful data sync with the number of events now durable. */
  onDurable?: (eventCount: number) => void;
  /** Which checkpoints force data to disk; every one does by default (see `SessionDurability`). */
  durability?: SessionDurability;
}

/**
 * How far a checkpoint goes. `power-loss` (default): every checkpoint writes and fdatasyncs, so what
 * was checkpointed survives a machine crash. `process-crash`: every checkpoint writes to the OS (which
 * survives the process being killed) and only turn ends, flushes and closes fdatasync.
 */
export type SessionDurability = 'power-loss' | 'process-crash';

const settled: Promise<void> = Promise.resolve();

// A batch this large is written at once rather than waiting for its window.
const maxBatchBytes = 1 << 20;

/**
 * The persistence sink of one live session file: `write` buffers lines synchronously, a timer writes
 * them in batches, and `checkpoint` writes what is buffered and forces it to disk (fdatasync). After
 * the first failure every later checkpoint rejects with it, so no tool runs on an unsaved log.
 */
export class SessionFileWriter implements SessionPersistence {
  readonly path: string;
  readonly #batchWindowMs: number;
  readonly #onDurable: ((eventCount: number) => void) | undefined;
  readonly #durability: SessionDurability;
  #handle: FileHandle | undefined;
  #pending: string[] = [];
  #pendingBytes = 0;
  #pendingEvents = 0;
  #writtenEvents = 0;
  #syncedEvents = 0;
  #timer: NodeJS.Timeout | undefined;
  // Every file operation runs on this chain, one at a time and in order.
  #chain: Promise<void> = Promise.resolve();
  // Operations on the chain that have not finished yet.
  #queued = 0;
  #failure: Error | undefined;
  #closed = false;
  // Events written before the file's format is known (the session's own first appends) wait here.
  #encoder: SessionLineEncoder | undefined;
  readonly #early: AnySessionEvent[] = [];

  constructor(options: SessionFileWriterOptions) {
    this.path = options.path;
    this.#batchWindowMs = options.batchWindowMs ?? 100;
    this.#onDurable = options.onDurable;
    this.#durability = options.durability ?? 'power-loss';
  }

  /**
   * Creates the file (it must not exist) with `initial` content (header, seed), durable before it
   * resolves. The content is written to a hidden temporary file first and linked into place, so a
   * crash leaves either no session or a complete header; an existing file fails with EEXIST.
   */
  async create(initial: string, initialEvents: number): Promise<void> {
    await this.#run(async () => {
      await linkIntoPlace(this.path, initial, { sync: true });
      await syncDirectory(dirname(this.path));
      this.#handle = await open(this.path, constants.O_WRONLY | constants.O_APPEND);
      this.#writtenEvents = initialEvents;
      this.#syncedEvents = initialEvents;
    });
  }

  /**
   * Opens an existing file for appending: cuts a torn tail at `completeBytes`, appends `initial`
   * (crash-repair closers), and makes both durable before it resolves.
   */
  async resume(
    completeBytes: number,
    tornBytes: number,
    initial: string,
    initialEvents: number,
  ): Promise<void> {
    await this.#run(async () => {
      this.#handle = await open(this.path, constants.O_WRONLY | constants.O_APPEND);
      if (tornBytes > 0) await this.#handle.truncate(completeBytes);
      if (initial !== '') this.#writeAll(Buffer.from(initial, 'utf8'));
      await this.#handle.datasync();
      this.#writtenEvents = initialEvents;
      this.#syncedEvents = initialEvents;
    });
  }

  /**
   * Encodes writes with `encoder` (the file's format, continuing its state past the initial content),
   * starting with those that came before it. Until then writes wait unencoded.
   */
  encodeWith(encoder: SessionLineEncoder = fullEnvelopeEncoder): void {
    this.#encoder = encoder;
    for (const event of this.#early.splice(0)) this.write(event);
  }

  /** The number of events known to be on disk. */
  get durableEvents(): number {
    return this.#syncedEvents;
  }

  write(event: AnySessionEvent): void {
    if (this.#failure !== undefined || this.#closed) return;
    if (this.#encoder === undefined) {
      this.#early.push(event);
      return;
    }
    const line = this.#encoder.encode(event);
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    this.#pendingEvents++;
    if (this.#pendingBytes >= maxBatchBytes) {
      this.#flushSoon(0);
    } else {
      this.#flushSoon(this.#batchWindowMs);
    }
  }

  checkpoint(reason: CheckpointReason, signal?: AbortSignal): Promise<void> {
    const sync = this.#durability === 'power-loss' || reason === 'turn-end' || reason === 'flush';
    if (!sync && this.#queued === 0 && this.#handle !== undefined && this.#failure === undefined) {
      // Nothing else is in flight: write straight away instead of queueing behind an empty chain, and
      // answer with a settled promise (no async round trip: this runs twice per step).
      try {
        this.#flushPending();
      } catch (error) {
        this.#failure = ioError(this.path, error);
        return Promise.reject(this.#failure);
      }
      return settled;
    }
    return this.#checkpointInOrder(sync, signal);
  }

  async #checkpointInOrder(sync: boolean, signal: AbortSignal | undefined): Promise<void> {
    const done = this.#run(async () => {
      this.#flushPending();
      if (sync) await this.#sync();
    });
    if (signal === undefined) return done;
    signal.throwIfAborted();
    // The sync goes on in the background; an aborted caller just stops waiting for it.
    await new Promise<void>((resolve, reject) => {
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

  /** Writes and syncs what is buffered, then closes the file; rejects with the first write failure. */
  async close(): Promise<void> {
    if (this.#closed) return this.#chain;
    const final = this.#run(async () => {
      this.#flushPending();
      await this.#sync();
    });
    this.#closed = true;
    try {
      await final;
    } finally {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      await this.#chain.catch(() => {
        // The failure was already reported by `final`.
      });
      await this.#handle?.close();
      this.#handle = undefined;
    }
  }

  #flushSoon(delayMs: number): void {
    if (this.#timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#run(() => this.#flushPending()).catch(() => {
        // Recorded in #failure; the next checkpoint (before any tool or request) reports it.
      });
    }, delayMs);
  }

  #run(operation: () => Promise<void> | void): Promise<void> {
    this.#queued++;
    const next = this.#chain.then(async () => {
      try {
        if (this.#failure !== undefined) throw this.#failure;
        try {
          await operation();
        } catch (error) {
          this.#failure = ioError(this.path, error);
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

  #flushPending(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.join('');
    const events = this.#pendingEvents;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#pendingEvents = 0;
    this.#writeAll(Buffer.from(text, 'utf8'));
    this.#writtenEvents += events;
  }

  async #sync(): Promise<void> {
    if (this.#syncedEvents >= this.#writtenEvents) return;
    const target = this.#writtenEvents;
    await this.#handle!.datasync();
    this.#syncedEvents = target;
    this.#onDurable?.(target);
  }

  #writeAll(buffer: Buffer): void {
    // A write into the page cache takes microseconds; doing it synchronously (on the writer's chain
    // or an idle checkpoint, never inside `write`) saves a thread-pool round trip per checkpoint.
    const fd = this.#handle!.fd;
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(fd, buffer, offset, buffer.length - offset);
  }
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
