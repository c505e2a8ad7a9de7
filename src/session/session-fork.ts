import type { SessionHeader } from './session.ts';
import { SessionError } from './session-error.ts';
import type { AnySessionEvent } from './session-event.ts';

/**
 * The prefix of a log a fork copies: up to and including `turn/end` of `atTurn`, or by default
 * everything before the open turn (the whole log when no turn is open). Throws SessionError
 * `INVALID_FORK` when `atTurn` is not a closed turn of the log.
 */
export function forkPrefix(events: readonly AnySessionEvent[], atTurn?: number): readonly AnySessionEvent[] {
  if (atTurn !== undefined) {
    if (!Number.isSafeInteger(atTurn) || atTurn < 1) {
      throw new SessionError('INVALID_FORK', `atTurn must be a positive integer, got ${String(atTurn)}`);
    }
    const end = events.findIndex(
      (event) => event.type === 'turn/end' && (event.data as { turn: number }).turn === atTurn,
    );
    if (end < 0) throw new SessionError('INVALID_FORK', `turn ${atTurn} has not ended in this log`);
    return events.slice(0, end + 1);
  }
  let openTurnStart: number | undefined;
  for (const event of events) {
    if (event.type === 'turn/start') openTurnStart = event.seq;
    else if (event.type === 'turn/end') openTurnStart = undefined;
  }
  return openTurnStart === undefined ? events : events.slice(0, openTurnStart);
}

/** The header of a fork of `parent`: a new id, the parent's cwd and title, and where the seed ends. */
export function forkHeader(
  parent: Readonly<SessionHeader>,
  id: string,
  seedLength: number,
): Omit<SessionHeader, 'version' | 'createdAt'> {
  const header: Omit<SessionHeader, 'version' | 'createdAt'> = {
    id,
    parentSession: parent.id,
    seedLength,
    origin: 'fork',
  };
  if (parent.cwd !== undefined) header.cwd = parent.cwd;
  if (parent.title !== undefined) header.title = parent.title;
  return header;
}
