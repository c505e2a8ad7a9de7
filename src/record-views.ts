import { budgetRecordView } from './plugins/budgets/budget-record-view.ts';
import { goalRecordView } from './plugins/goals/goal-record-view.ts';
import { guardRecordView } from './plugins/repetition-guard/guard-record-view.ts';
import type { RecordView } from './session/index.ts';

/**
 * The record views of Rein's own plugins (goals, budgets, repetition guard): what transcripts use unless
 * told otherwise. Browser-safe: these modules import only types.
 */
export const defaultRecordViews: readonly RecordView[] = [goalRecordView, budgetRecordView, guardRecordView];
