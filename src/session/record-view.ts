import type { DurableEvent } from './session-event.ts';

/** How a record reads: its sentence, and whether it reports progress, success or a stop. */
export interface RecordNote {
  readonly text: string;
  readonly tone: 'info' | 'success' | 'stopped';
}

/**
 * How transcripts present the durable records one module owns (goals, budgets, …), declared by that
 * module so shared code never switches on its event names. `reduce` sees every event in seq order and
 * keeps the module's own state (e.g. the active goal); `describe` reads one of the module's records
 * after `reduce` has seen it. Both are pure: a reload folds to the same result.
 */
export interface RecordView<State = unknown> {
  /** A stable name for the module's state, e.g. `goals`. */
  readonly name: string;
  /** The durable event types this view describes. */
  readonly types: readonly string[];
  readonly initialState: State;
  reduce?(state: State, event: DurableEvent): State;
  describe(event: DurableEvent, state: State): RecordNote | undefined;
}
