import { randomUUID } from 'node:crypto';
import type { UserMessage } from '../llm/index.ts';
import { messageText } from '../llm/index.ts';
import { repairInterruptedTail } from './crash-repair.ts';
import type { SessionHeader } from './session.ts';
import { SessionError } from './session-error.ts';
import type { AnySessionEvent } from './session-event.ts';
import type { SessionForkOptions, SessionStore } from './session-store.ts';

/** The log a store forks from: its header, its events, and whether a writer holds it now. */
export interface StoredForkSource {
  parent: Readonly<SessionHeader>;
  events: readonly AnySessionEvent[];
  /** True when a live writer (this process or another) holds the log, so its open turn is in progress. */
  held: boolean;
}

/**
 * The fork flow every store shares: a log a writer holds is cut before its open turn; a log nobody
 * holds may end inside a crashed turn, which is closed (as a resume would) so that the fork keeps it.
 * The prefix seeds a new session created through `store`, released at once; returns its header.
 */
export async function forkStoredSession(
  store: Pick<SessionStore, 'create' | 'release'>,
  source: StoredForkSource,
  options: SessionForkOptions,
): Promise<SessionHeader> {
  const events = source.held ? source.events : repairInterruptedTail(source.events);
  const prefix = forkPrefix(events, options.atTurn);
  const session = await store.create(forkHeader(source.parent, options.id ?? randomUUID(), prefix), {
    seed: prefix,
  });
  await store.release(session);
  return { ...session.header };
}

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

/**
 * The header of a fork of `parent` seeded with `prefix`: a new id, the parent's cwd, where the seed
 * ends, and a title that says it is a fork (`… (fork at turn 3)`), so listings tell the two apart.
 */
export function forkHeader(
  parent: Readonly<SessionHeader>,
  id: string,
  prefix: readonly AnySessionEvent[],
): Omit<SessionHeader, 'version' | 'createdAt'> {
  const header: Omit<SessionHeader, 'version' | 'createdAt'> = {
    id,
    parentSession: parent.id,
    seedLength: prefix.length,
    origin: 'fork',
    title: forkTitle(parent, prefix),
  };
  if (parent.cwd !== undefined) header.cwd = parent.cwd;
  return header;
}

const forkMark = / \(fork (?:at|before) turn \d+\)$/;

/** The title of a fork: the parent's title (or first prompt) and the last turn the fork keeps. */
export function forkTitle(parent: Readonly<SessionHeader>, prefix: readonly AnySessionEvent[]): string {
  let base = parent.title;
  let lastTurn: number | undefined;
  for (const event of prefix) {
    if (event.type === 'turn/end') lastTurn = (event.data as { turn: number }).turn;
    else if (base === undefined && event.type === 'user/message') {
      const message = event.data as UserMessage;
      if (message.source.kind === 'user') base = messageText(message).split('\n', 1)[0]!.slice(0, 80);
    }
  }
  // A fork of a fork names only its own turn, not a chain of marks.
  const stem = (base ?? 'untitled').replace(forkMark, '');
  return lastTurn === undefined ? `${stem} (fork before turn 1)` : `${stem} (fork at turn ${lastTurn})`;
}
