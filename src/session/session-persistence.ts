import type { AnySessionEvent } from './session-event.ts';

/** Where a session's appends go to become durable; the memory store has none. */
export interface SessionPersistence {
  /**
   * Receives every committed event, synchronously, in seq order; must not block. `packedKind` is the
   * shape the log judged the event to have, or was told it has (see packed-event.ts and
   * `SessionLog.push`; `eventEntry` or absent when neither): a promise about its exact members that an
   * encoder may use instead of checking them again.
   */
  write(event: AnySessionEvent, packedKind?: number): void;
  /**
   * Makes everything written so far durable at the store's durability level (or schedules it, for
   * `request`); rejects when it cannot.
   * Answers `checkpointDone` itself when there is nothing to wait for.
   */
  checkpoint(reason: CheckpointReason, signal?: AbortSignal): Promise<void>;
  /** The failure that makes every later checkpoint reject, as soon as it is known (a background write). */
  readonly failure?: Error | undefined;
}

/** The moments durability is asked for; `flush` (an explicit request) forces storage under every durability policy. */
export type CheckpointReason = 'request' | 'tool' | 'turn-end' | 'flush';

/**
 * The settled promise a persistence sink's `checkpoint` answers when there is nothing to wait for, which
 * `Session.checkpoint` passes on as it is: a caller holding it can skip the await (and its tick).
 */
export const checkpointDone: Promise<void> = Promise.resolve();
