import { registerSessionEventTypes } from '../../session/index.ts';

/** What a budget limits. */
export type BudgetKind = 'tokens' | 'costUsd' | 'steps';

/** Where a budget applies: to each turn, or to the whole session. */
export type BudgetScope = 'turn' | 'session';

/** A named limit, e.g. `turn.steps` or `session.costUsd`. */
export type BudgetLimitName = `${BudgetScope}.${BudgetKind}`;

/** Maxima per kind; an omitted kind is unlimited. */
export interface BudgetLimits {
  /** Tokens processed: input, cache reads and writes, and output. */
  tokens?: number;
  /** US dollars, at the prices the model's adapter reports (responses without known prices cost 0). */
  costUsd?: number;
  /** Steps (model requests that entered the log). */
  steps?: number;
}

/** A change of limits: a new maximum per kind, or null to remove that limit. */
export type BudgetChange = { [Kind in BudgetKind]?: number | null };

declare module '../../session/session-event.ts' {
  interface SessionEventMap {
    'budget/reached': { turn: number; step: number; limit: BudgetLimitName; used: number; max: number };
    'budget/raised': { perTurn?: BudgetChange; perSession?: BudgetChange };
    /** The user ended the work a budget paused (the `budget/reached` at `reachedSeq`) instead of resuming it. */
    'budget/stopped': { reachedSeq: number };
  }
}

registerSessionEventTypes(['budget/reached', 'budget/raised', 'budget/stopped']);
