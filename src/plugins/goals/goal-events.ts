import { registerSessionEventTypes } from '../../session/index.ts';

/** Why a goal stopped without being completed. */
export type GoalStopReason = 'round-limit' | 'no-progress' | 'cancelled' | 'cleared' | 'replaced';

declare module '../../session/session-event.ts' {
  interface SessionEventMap {
    'goal/set': { goalId: string; objective: string; maxRounds: number };
    'goal/continued': { goalId: string; round: number };
    'goal/completed': { goalId: string; callId: string; evidence: string; rounds: number };
    'goal/stopped': { goalId: string; reason: GoalStopReason; rounds: number };
  }
}

registerSessionEventTypes(['goal/set', 'goal/continued', 'goal/completed', 'goal/stopped']);
