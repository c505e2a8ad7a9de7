import type { AssistantMessage, ToolResultMessage } from '../../llm/index.ts';
import { messageText } from '../../llm/index.ts';
import type { AnySessionEvent, ReadonlySessionLog, Session, SessionEventMap } from '../../session/index.ts';
import './goal-events.ts';

const goalEventTypes: ReadonlySet<string> = new Set([
  'goal/set',
  'goal/continued',
  'goal/completed',
  'goal/stopped',
]);

/** The goal a session is pursuing, as its log records it. */
export interface ActiveGoal {
  readonly goalId: string;
  readonly objective: string;
  readonly maxRounds: number;
  /** Continuation rounds spent so far. */
  readonly rounds: number;
  /** The seq of its `goal/set`. */
  readonly setSeq: number;
  /** The seq of its latest `goal/continued`, if any. */
  readonly lastContinuedSeq: number | undefined;
}

/** The active goal of a session, read backwards from its log: the latest `goal/set` not yet completed or stopped. */
export function readActiveGoal(session: Session): ActiveGoal | undefined {
  const log = session.log;
  let rounds = 0;
  let lastContinuedSeq: number | undefined;
  for (
    let index = log.previousOfType(goalEventTypes, log.length);
    index >= 0;
    index = log.previousOfType(goalEventTypes, index)
  ) {
    const event = log.at(index)!;
    switch (event.type) {
      case 'goal/completed':
      case 'goal/stopped':
        return undefined;
      case 'goal/continued':
        rounds++;
        lastContinuedSeq ??= event.seq;
        break;
      case 'goal/set': {
        const data = event.data as SessionEventMap['goal/set'];
        return {
          goalId: data.goalId,
          objective: data.objective,
          maxRounds: data.maxRounds,
          rounds,
          setSeq: event.seq,
          lastContinuedSeq,
        };
      }
      default:
        break;
    }
  }
  return undefined;
}

/** What the round that just ended did for the goal. */
export interface RoundReview {
  /** False when the turn began before the goal was set (the goal governs later turns only). */
  readonly applies: boolean;
  /** True when the round had a successful tool result or said something not said before in this goal. */
  readonly progress: boolean;
}

/**
 * Reviews the current round of `turn`: it starts at the later of the turn's `turn/start` and the goal's
 * latest `goal/continued`; earlier rounds of the goal are what "new" text is compared with.
 */
export function reviewRound(session: Session, goal: ActiveGoal, turn: number): RoundReview {
  const log = session.log;
  const turnStart = findTurnStart(log, turn);
  if (turnStart === undefined || turnStart < goal.setSeq) return { applies: false, progress: false };
  const roundStart = Math.max(turnStart, goal.lastContinuedSeq ?? -1);
  const earlier = new Set<string>();
  for (let seq = goal.setSeq + 1; seq < roundStart; seq++) {
    if (log.typeAt(seq) !== 'assistant/message') continue;
    const text = spokenText(log.at(seq)!);
    if (text !== undefined) earlier.add(text);
  }
  for (let seq = roundStart + 1; seq < log.length; seq++) {
    const type = log.typeAt(seq);
    if (type !== 'assistant/message' && type !== 'tool/result') continue;
    const event = log.at(seq)!;
    if (isSuccessfulToolResult(event)) return { applies: true, progress: true };
    const text = spokenText(event);
    if (text !== undefined && !earlier.has(text)) return { applies: true, progress: true };
  }
  return { applies: true, progress: false };
}

function findTurnStart(log: ReadonlySessionLog, turn: number): number | undefined {
  for (let index = log.length - 1; index >= 0; index--) {
    if (log.typeAt(index) !== 'turn/start') continue;
    const event = log.at(index)!;
    if (event.type === 'turn/start' && (event.data as { turn: number }).turn === turn) return event.seq;
  }
  return undefined;
}

function spokenText(event: AnySessionEvent): string | undefined {
  if (event.type !== 'assistant/message') return undefined;
  const data = event.data as { message: AssistantMessage; interrupted?: true };
  if (data.interrupted === true) return undefined;
  const text = messageText(data.message).trim();
  return text === '' ? undefined : text;
}

function isSuccessfulToolResult(event: AnySessionEvent): boolean {
  if (event.type !== 'tool/result' || typeof event.surfaceOp === 'object') return false;
  const data = event.data as { message: ToolResultMessage; error?: unknown };
  if (data.error !== undefined) return false;
  const block = data.message.content[0];
  return block?.type === 'tool-result' && block.isError !== true;
}
