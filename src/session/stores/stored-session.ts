import type { HookBus } from '../../hooks/index.ts';
import { Session } from '../session.ts';
import type { SessionHeader, SessionResumePoint } from '../session.ts';
import type { SessionPersistence } from '../session-persistence.ts';
import { SessionError } from '../session-error.ts';
import type { AnySessionEvent } from '../session-event.ts';

// Ids become file names: no separators, no leading dot, a bounded length. Every store keeps this rule,
// so that sessions move between the stores unchanged.
const validId = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/** True for an id a store accepts (also a safe file name). */
export function isValidSessionId(id: string): boolean {
  return validId.test(id);
}

/** Throws SessionError `INVALID_SESSION_ID` for an id no store accepts. */
export function checkSessionId(id: string): void {
  if (typeof id !== 'string' || !validId.test(id)) {
    throw new SessionError(
      'INVALID_SESSION_ID',
      `invalid session id ${JSON.stringify(id)}: use up to 128 letters, digits, '.', '_' or '-', not starting with '.' or '-'`,
    );
  }
}

/** What a live session of a durable store is built from. */
export interface StoredSessionParts {
  header: SessionHeader;
  seed: readonly AnySessionEvent[] | undefined;
  persistence: SessionPersistence;
  hooks: HookBus | undefined;
  /** The seed array is the store's own (freshly parsed), so the session may keep it without a copy. */
  seedOwned?: boolean;
  /** What the corruption message says was left alone ("the file was not changed"). */
  untouched: string;
  /** The log starts after this resume point's prefix; `seed` then holds only what follows it. */
  resumeFrom?: SessionResumePoint | undefined;
}

/**
 * Builds the live session of a stored log; a stored seed that breaks the session rules is
 * SessionError `SESSION_CORRUPT` (nothing is changed), any other failure passes through.
 */
export function constructStoredSession(parts: StoredSessionParts): Session {
  const options: ConstructorParameters<typeof Session>[0] = {
    header: parts.header,
    persistence: parts.persistence,
  };
  if (parts.hooks !== undefined) options.hooks = parts.hooks;
  if (parts.seed !== undefined) options.seed = parts.seed;
  if (parts.seedOwned === true) options.seedOwned = true;
  if (parts.resumeFrom !== undefined) options.resumeFrom = parts.resumeFrom;
  try {
    return new Session(options);
  } catch (error) {
    if (!(error instanceof SessionError) || parts.seed === undefined) throw error;
    throw new SessionError(
      'SESSION_CORRUPT',
      `session ${parts.header.id}: the stored log breaks the session rules (${error.message}); ${parts.untouched}`,
      { cause: error },
    );
  }
}
