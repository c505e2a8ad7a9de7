// The browser-safe part of the SDK the UI bundles: the one transcript fold and the record views.
export * from '../../src/transcript/index.ts';
export { defaultRecordViews } from '../../src/record-views.ts';
export { goalRecordView } from '../../src/plugins/goals/goal-record-view.ts';
export type { GoalProgress, GoalViewState } from '../../src/plugins/goals/goal-record-view.ts';
export {
  budgetLimitLabel,
  budgetRecordView,
  formatBudgetAmount,
} from '../../src/plugins/budgets/budget-record-view.ts';
export type { BudgetViewState, PausedBudget } from '../../src/plugins/budgets/budget-record-view.ts';
export type { AnySessionEvent, TurnEndReason } from '../../src/session/index.ts';
export type { ContentBlock, LlmFailure, Message, TokenUsage } from '../../src/llm/index.ts';
