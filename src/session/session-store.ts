import type { HookBus } from '../hooks/index.ts';
import type { Session, SessionHeader } from './session.ts';
import type { AnySessionEvent } from './session-event.ts';

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
  /** Lists stored sessions, newest first. */
  list(): Promise<SessionSummary[]>;
  /** Deletes a stored session that no live agent holds. */
  delete(id: string): Promise<void>;
  /** Releases a live session (flushes, drops its write lock). */
  release(session: Session): Promise<void>;
  /** Attaches the hook bus live sessions publish on. */
  bind?(hooks: HookBus): void;
}
