import { constants, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CheckpointReason, SessionPersistence } from '../session-persistence.ts';
import type { AnySessionEvent } from '../session-event.ts';
import { eventEntry } from '../packed-event.ts';
import { CheckpointBatcher } from './checkpoint-batcher.ts';
import type { SessionDurability } from './checkpoint-batcher.ts';
import { linkIntoPlace } from './link-into-place.ts';
import { LineBytes } from './line-bytes.ts';
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
  /** Which checkpoints force data to disk (see `SessionDurability`); `power-loss` by default. */
  durability?: SessionDurability;
}

export type { SessionDurability } from './checkpoint-batcher.ts';

// How many committed events wait to be encoded together: encoding a step's events back to back costs
// less CPU than one at a time among the loop's own work (bench/README.md, round 5).
const heldEvents = 16;

/**
 * The persistence sink of one live session file: `write` buffers lines synchronously and the shared
 * checkpoint batcher writes them in batches and forces them to disk (fdatasync) where its policy says.
 * After the first failure every later checkpoint rejects with it, so no tool runs on an unsaved log.
 */
export class SessionFileWriter implements SessionPersistence {
  readonly path: string;
  readonly #onDurable: ((eventCount: number) => void) | undefined;
  readonly #batch: CheckpointBatcher;
  #handle: FileHandle | undefined;
  #writtenEvents = 0;
  #syncedEvents = 0;
  // Events written before the file's format is known (the session's own first appends) wait here.
  #encoder: SessionLineEncoder | undefined;
  readonly #early: AnySessionEvent[] = [];
  // Committed events not encoded yet (the first #heldCount slots): encoded in order at `heldEvents`, and
  // before every checkpoint, store and close (the batcher drains them), so they are stored exactly when
  // added lines would be. The slots are reused: truncating the array would drop its backing store.
  readonly #held: (AnySessionEvent | undefined)[] = new Array<AnySessionEvent | undefined>(heldEvents).fill(
    undefined,
  );
  // The log's shape judgement of each held event (`SessionPersistence.write`), in the same slots.
  readonly #heldKinds: number[] = new Array<number>(heldEvents).fill(eventEntry);
  #heldCount = 0;
  // The encoded lines not stored yet, as the bytes the file gets: no line is ever a string of its own.
  readonly #lines = new LineBytes();

  constructor(options: SessionFileWriterOptions) {
    this.path = options.path;
    this.#onDurable = options.onDurable;
    this.#batch = new CheckpointBatcher(
      {
        store: (sync, _signal, events) => this.#store(sync, events),
        failure: (error) => ioError(this.path, error),
        drain: () => this.#encodeHeld(),
      },
      {
        batchWindowMs: options.batchWindowMs ?? 100,
        durability: options.durability ?? 'power-loss',
      },
    );
  }

  /**
   * Creates the file (it must not exist) with `initial` content (header, seed), durable before it
   * resolves. The content is written to a hidden temporary file first and linked into place, so a
   * crash leaves either no session or a complete header; an existing file fails with EEXIST.
   */
  async create(initial: string, initialEvents: number): Promise<void> {
    await this.#batch.run(async () => {
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
    await this.#batch.run(async () => {
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

  /** The first failure (a write or sync that failed), if any. */
  get failure(): Error | undefined {
    return this.#batch.failure;
  }

  /** The number of events known to be on disk. */
  get durableEvents(): number {
    return this.#syncedEvents;
  }

  write(event: AnySessionEvent, packedKind: number = eventEntry): void {
    if (this.#encoder === undefined) {
      this.#early.push(event);
      return;
    }
    const held = ++this.#heldCount;
    this.#held[held - 1] = event;
    this.#heldKinds[held - 1] = packedKind;
    if (held === 1) this.#batch.expect();
    else if (held >= heldEvents) this.#encodeHeld();
  }

  checkpoint(reason: CheckpointReason, signal?: AbortSignal): Promise<void> {
    return this.#batch.checkpoint(reason, signal);
  }

  /** Writes and syncs what is buffered, then closes the file; rejects with the first write failure. */
  async close(): Promise<void> {
    try {
      await this.#batch.close();
    } finally {
      await this.#handle?.close();
      this.#handle = undefined;
    }
  }

  #store(sync: boolean, events: number): Promise<void> | void {
    if (events > 0) {
      const bytes = this.#lines.bytes();
      this.#writeAll(bytes);
      this.#lines.clear();
      this.#writtenEvents += events;
    }
    if (sync && this.#syncedEvents < this.#writtenEvents) return this.#sync();
  }

  #encodeHeld(): void {
    const held = this.#held;
    const count = this.#heldCount;
    if (count === 0) return;
    const encoder = this.#encoder!;
    const lines = this.#lines;
    const start = lines.length;
    // Every event written here is one `Session.append` committed: its envelope needs no check.
    const kinds = this.#heldKinds;
    for (let index = 0; index < count; index++) encoder.encodeInto(lines, held[index]!, true, kinds[index]);
    // After a failure or close nothing more is stored: the lines are dropped as the batcher drops them.
    if (!this.#batch.added(count, lines.length - start)) lines.truncate(start);
    // Emptied once all are encoded, so the slots keep no event alive.
    for (let index = 0; index < count; index++) held[index] = undefined;
    this.#heldCount = 0;
  }

  async #sync(): Promise<void> {
    const target = this.#writtenEvents;
    await this.#handle!.datasync();
    this.#syncedEvents = target;
    this.#onDurable?.(target);
  }

  #writeAll(buffer: Buffer): void {
    // A write into the page cache takes microseconds; doing it synchronously (on the writer's chain
    // or an idle checkpoint, never inside `write`) saves a thread-pool round trip per checkpoint. A short
    // write (rare on a regular file) goes on from the byte it stopped at.
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
