import type { HookBus } from '../hooks/index.ts';
import type { ModelInfo } from '../llm/index.ts';
import type { SavedLogScan } from './log-scan-states.ts';
import type { Session, SessionHeader } from './session.ts';
import type { AnySessionEvent } from './session-event.ts';
import type { ReadonlySessionLog } from './session-log.ts';

/** A summary row for session listings. */
export interface SessionSummary {
  id: string;
  title?: string;
  cwd?: string;
  createdAt: number;
  updatedAt: number;
  turns: number;
  events: number;
  parentSession?: string;
  /** Token totals over every model call in the log. */
  usage?: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
  /** Cost in US dollars, when the store knows the models' prices. */
  cost?: number;
  /** Where a stored log stops being readable; the summary covers the records before it. */
  corrupt?: { line: number; offset: number };
}

/** Looks up the prices of a provider's model (as `ModelInfo.pricing` gives them), for session costs. */
export type PricingLookup = (provider: string, model: string) => ModelInfo['pricing'] | undefined;

/** Options of `SessionStore.fork`. */
export interface SessionForkOptions {
  /** The id of the new session; a random UUID when omitted. */
  id?: string;
  /** Fork after this turn's `turn/end`; by default after the last closed turn (or the whole balanced log). */
  atTurn?: number;
  /** Fork a stored log that fails to load from its last good record instead of refusing it. */
  salvage?: boolean;
}

/** Options of `SessionStore.follow`. */
export interface SessionFollowOptions {
  /** The first seq to deliver. */
  from: number;
  /** Receives stored events in seq order, each exactly once, with no gap from `from` on. */
  onEvents: (events: readonly AnySessionEvent[]) => void;
  /** Ends the subscription. */
  signal: AbortSignal;
}

/** A stored session read without taking it for writing, its log read on demand where the store can. */
export interface StoredSessionLog {
  header: SessionHeader;
  log: ReadonlySessionLog;
  /** What the log's scans had derived from a prefix of it, by scan name, when the store saved that. */
  scans: Readonly<Record<string, SavedLogScan>>;
}

/** The seam every session store implements (memory, disk, and later a database). */
export interface SessionStore {
  /** Creates a new live session; throws SessionError `SESSION_EXISTS` for an id in use. */
  create(
    header: Omit<SessionHeader, 'version' | 'createdAt'> & { createdAt?: number },
    options?: {
      seed?: readonly AnySessionEvent[];
    },
  ): Promise<Session>;
  /** Opens a stored session for writing (repairing an interrupted tail); throws `SESSION_NOT_FOUND`. */
  open(id: string): Promise<Session>;
  /** Reads a stored session's header and events without taking it for writing. */
  read(id: string): Promise<{ header: SessionHeader; events: AnySessionEvent[] }>;
  /**
   * Reads a stored session as `read` does, without parsing what its snapshot covers (those events are
   * decoded when asked for) and with the snapshot's scan states; stores without snapshots leave it out.
   */
  readLog?(id: string): Promise<StoredSessionLog>;
  /** Lists stored sessions, newest first. */
  list(): Promise<SessionSummary[]>;
  /** Deletes a stored session that no live agent holds. */
  delete(id: string): Promise<void>;
  /**
   * Creates a new stored session seeded with a prefix of another that ends at a turn boundary (header
   * `origin: 'fork'`, `parentSession`, `seedLength`); returns its header, not held for writing.
   */
  fork(id: string, options?: SessionForkOptions): Promise<SessionHeader>;
  /** Releases a live session (flushes, drops its write lock). */
  release(session: Session): Promise<void>;
  /** Attaches the hook bus live sessions publish on. */
  bind?(hooks: HookBus): void;
  /**
   * Streams the stored events another process appends to a session it writes (a store shared between
   * servers); stores without other writers leave it out.
   */
  follow?(id: string, options: SessionFollowOptions): void;
  /** A stored session as the disk store's JSONL text (header line, one line per event), byte for byte. */
  exportLog?(id: string): Promise<string>;
  /** Stores a session from such text unchanged (checked first); throws `SESSION_EXISTS` for an id in use. */
  importLog?(text: string, source?: string): Promise<SessionHeader>;
  /** Releases the store's own resources (connections); sessions must be released first. */
  close?(): Promise<void>;
}
