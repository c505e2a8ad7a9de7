import type { BudgetLimitName } from '../index.ts';

/** `turn.steps: 3/2`-style text for a reached limit, with cost in dollars. */
export function describeBudget(limit: BudgetLimitName, used: number, max: number): string {
  return `${limit}: ${budgetAmount(limit, used)}/${budgetAmount(limit, max)}`;
}

function budgetAmount(limit: BudgetLimitName, value: number): string {
  return limit.endsWith('.costUsd') ? `$${roundCost(value)}` : String(value);
}

/** A cost rounded for display without hiding small amounts. */
export function roundCost(value: number): string {
  return value >= 1 ? value.toFixed(2) : String(Number(value.toPrecision(3)));
}
