import type { RecordView } from '../../session/index.ts';
import type { BudgetChange, BudgetLimitName } from './budget-events.ts';

/** A budget limit that paused the work, waiting for "raise and continue" or "stop". */
export interface PausedBudget {
  /** The seq of its `budget/reached` record. */
  readonly seq: number;
  readonly limit: BudgetLimitName;
  readonly used: number;
  readonly max: number;
}

/** The budgets plugin's state in a transcript: the paused work, if any. */
export interface BudgetViewState {
  readonly paused: PausedBudget | undefined;
}

/** How transcripts present `budget/*` records, and the paused work they derive from them. */
export const budgetRecordView: RecordView<BudgetViewState> = {
  name: 'budgets',
  types: ['budget/reached', 'budget/raised', 'budget/stopped'],
  initialState: { paused: undefined },
  reduce(state, event) {
    switch (event.type) {
      // Any new turn (a continuation, or new input) takes the paused work forward or re-pauses it.
      case 'turn/start':
        return { paused: undefined };
      case 'budget/reached':
        return { paused: { seq: event.seq, ...pick(event.data) } };
      case 'budget/stopped':
        // The paused work was ended, not resumed: it must not come back on a reload.
        return state.paused?.seq === event.data.reachedSeq ? { paused: undefined } : state;
      default:
        return state;
    }
  },
  describe(event) {
    switch (event.type) {
      case 'budget/reached':
        return {
          text:
            `Budget reached: ${budgetLimitLabel(event.data.limit)} — used ` +
            `${formatBudgetAmount(event.data.limit, event.data.used)} of ` +
            `${formatBudgetAmount(event.data.limit, event.data.max)}. The work is paused.`,
          tone: 'stopped',
        };
      case 'budget/raised': {
        const changes = [
          ...describeChanges('turn', event.data.perTurn),
          ...describeChanges('session', event.data.perSession),
        ];
        return { text: `Budget raised${changes.length > 0 ? `: ${changes.join(', ')}` : ''}`, tone: 'info' };
      }
      case 'budget/stopped':
        return { text: 'Stopped at the budget: the paused work was dropped.', tone: 'stopped' };
      default:
        return undefined;
    }
  },
};

/** A budget limit name (`session.tokens`) in words (`session tokens`, `per-turn cost`). */
export function budgetLimitLabel(limit: string): string {
  const [scope, kind] = limit.split('.');
  const what = kind === 'costUsd' ? 'cost' : (kind ?? limit);
  return `${scope === 'turn' ? 'per-turn' : 'session'} ${what}`;
}

/** An amount of a budget limit: dollars for cost, whole numbers otherwise. */
export function formatBudgetAmount(limit: string, value: number): string {
  return limit.endsWith('.costUsd') ? `$${value.toFixed(value < 1 ? 4 : 2)}` : String(value);
}

function pick(data: { limit: BudgetLimitName; used: number; max: number }): Omit<PausedBudget, 'seq'> {
  return { limit: data.limit, used: data.used, max: data.max };
}

function describeChanges(scope: 'turn' | 'session', change: BudgetChange | undefined): string[] {
  const changes: string[] = [];
  for (const [kind, value] of Object.entries(change ?? {})) {
    const limit = `${scope}.${kind}`;
    changes.push(
      `${budgetLimitLabel(limit)} → ${value === null || value === undefined ? 'unlimited' : formatBudgetAmount(limit, value)}`,
    );
  }
  return changes;
}
