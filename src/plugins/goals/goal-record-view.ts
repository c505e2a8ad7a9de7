import type { RecordView } from '../../session/index.ts';
import type { GoalStopReason } from './goal-events.ts';

/** The goal a transcript shows as active: set and neither completed nor stopped yet. */
export interface GoalProgress {
  readonly goalId: string;
  readonly objective: string;
  readonly maxRounds: number;
  /** Continuation rounds taken so far. */
  readonly rounds: number;
}

/** The goals plugin's state in a transcript: the active goal, if any. */
export interface GoalViewState {
  readonly active: GoalProgress | undefined;
}

const stopTexts: Readonly<Record<GoalStopReason, string>> = {
  'round-limit': 'it used all its continuation rounds without being completed',
  'no-progress': 'the last round made no progress (no tool effects and nothing new said)',
  cancelled: 'the turn was stopped',
  cleared: 'it was cleared',
  replaced: 'a new goal replaced it',
};

/** How transcripts present `goal/*` records, and the active goal they derive from them. */
export const goalRecordView: RecordView<GoalViewState> = {
  name: 'goals',
  types: ['goal/set', 'goal/continued', 'goal/completed', 'goal/stopped'],
  initialState: { active: undefined },
  reduce(state, event) {
    switch (event.type) {
      case 'goal/set':
        return {
          active: {
            goalId: event.data.goalId,
            objective: event.data.objective,
            maxRounds: event.data.maxRounds,
            rounds: 0,
          },
        };
      case 'goal/continued':
        return state.active === undefined ? state : { active: { ...state.active, rounds: event.data.round } };
      case 'goal/completed':
      case 'goal/stopped':
        return { active: undefined };
      default:
        return state;
    }
  },
  describe(event, state) {
    switch (event.type) {
      case 'goal/set':
        return {
          text: `Goal set: ${event.data.objective} (up to ${plural(event.data.maxRounds, 'continuation round')})`,
          tone: 'info',
        };
      case 'goal/continued': {
        const of = state.active !== undefined ? ` of ${state.active.maxRounds}` : '';
        return { text: `Goal not yet complete — continuation round ${event.data.round}${of}`, tone: 'info' };
      }
      case 'goal/completed':
        return {
          text: `Goal completed after ${plural(event.data.rounds, 'continuation round')}: ${event.data.evidence}`,
          tone: 'success',
        };
      case 'goal/stopped':
        return {
          text:
            event.data.reason === 'cleared'
              ? 'Goal cleared'
              : `Goal stopped: ${stopTexts[event.data.reason] ?? event.data.reason}`,
          tone: 'stopped',
        };
      default:
        return undefined;
    }
  },
};

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
