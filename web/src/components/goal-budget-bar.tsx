import { raisedMax } from '../budget-raise.ts';
import type { GoalProgress, PausedBudget } from '../sdk.ts';
import { budgetLimitLabel as limitLabel, formatBudgetAmount as formatAmount } from '../sdk.ts';

/** The active goal (with "Clear goal") and, when a budget paused the work, "Raise limit and continue" / "Stop". */
export function GoalBudgetBar(props: {
  goal: GoalProgress | undefined;
  paused: PausedBudget | undefined;
  onClearGoal: () => void;
  onRaiseAndContinue: (paused: PausedBudget) => void;
  onStop: (paused: PausedBudget) => void;
}) {
  const { goal, paused } = props;
  if (goal === undefined && paused === undefined) return null;
  return (
    <div class="goal-budget">
      {goal !== undefined && (
        <div class="goal-bar" data-testid="active-goal">
          <span class="chip">Goal</span>
          <span class="goal-objective">{goal.objective}</span>
          <span class="goal-rounds" data-testid="goal-rounds">
            round {goal.rounds} of {goal.maxRounds}
          </span>
          <button type="button" data-testid="clear-goal" onClick={props.onClearGoal}>
            Clear goal
          </button>
        </div>
      )}
      {paused !== undefined && (
        <div class="banner banner-warning" role="alert" data-testid="budget-banner">
          Budget reached: {limitLabel(paused.limit)} — used {formatAmount(paused.limit, paused.used)} of{' '}
          {formatAmount(paused.limit, paused.max)}. Raise it to{' '}
          {formatAmount(paused.limit, raisedMax(paused))} and continue the paused work, or stop.
          <div class="banner-actions">
            <button
              type="button"
              class="primary"
              data-testid="budget-continue"
              onClick={() => props.onRaiseAndContinue(paused)}
            >
              Raise limit and continue
            </button>
            <button type="button" data-testid="budget-stop" onClick={() => props.onStop(paused)}>
              Stop
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
