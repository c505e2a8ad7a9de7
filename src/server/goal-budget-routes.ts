import type { BudgetChange, BudgetRaise } from '../index.ts';
import {
  activeGoal,
  budgetUsage,
  clearGoal,
  continueAfterBudget,
  raiseBudget,
  setGoal,
  stopAfterBudget,
} from '../index.ts';
import type { ApiAnswer, ApiContext, Route } from './api-routes.ts';
import { acknowledgeDurably } from './durable-acknowledgement.ts';
import { HttpError } from './http-error.ts';
import { objectBody } from './request-body.ts';

const id = '([^/]+)';

/** The goals and budgets API: set or clear a session's goal; raise a reached budget and continue, or stop. */
export const goalBudgetRoutes: readonly Route[] = [
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/goal$`), handler: startGoal },
  { method: 'DELETE', pattern: new RegExp(`^/api/sessions/${id}/goal$`), handler: stopGoal },
  {
    method: 'POST',
    pattern: new RegExp(`^/api/sessions/${id}/budget/continue$`),
    handler: continueBudget,
  },
  { method: 'POST', pattern: new RegExp(`^/api/sessions/${id}/budget/stop$`), handler: stopBudget },
];

async function startGoal(
  context: ApiContext,
  [sessionId]: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const fields = objectBody(body);
  const objective = fields.objective;
  if (typeof objective !== 'string' || objective.trim() === '') {
    throw new HttpError(400, 'INVALID_REQUEST', 'objective must be a non-empty string');
  }
  const maxRounds = fields.maxRounds;
  if (
    maxRounds !== undefined &&
    (typeof maxRounds !== 'number' || !Number.isSafeInteger(maxRounds) || maxRounds < 0)
  ) {
    throw new HttpError(400, 'INVALID_REQUEST', 'maxRounds must be a non-negative integer');
  }
  const agent = await context.live(sessionId!);
  context.hub.keepApprover(agent.id);
  // setGoal records goal/set and queues the objective as a followup (a turn starts when idle).
  const goal = setGoal(agent, objective, maxRounds !== undefined ? { maxRounds } : {});
  await acknowledgeDurably(agent);
  return { status: 201, body: { goal, state: context.hub.state(agent.id) } };
}

async function stopGoal(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  const agent = await context.live(sessionId!);
  const goal = activeGoal(agent);
  const cleared = clearGoal(agent);
  return { body: { cleared, ...(goal !== undefined ? { goalId: goal.goalId } : {}) } };
}

async function continueBudget(
  context: ApiContext,
  [sessionId]: readonly string[],
  body: unknown,
): Promise<ApiAnswer> {
  const fields = objectBody(body);
  const raise = fields.raise !== undefined ? budgetRaise(fields.raise) : undefined;
  const agent = await context.live(sessionId!);
  // Checked before anything is written: a busy agent leaves the log unchanged.
  if (agent.status === 'running') {
    throw new HttpError(409, 'AGENT_BUSY', 'the agent is running; nothing is paused');
  }
  context.hub.keepApprover(agent.id);
  // Both fail with BUDGETS_NOT_INSTALLED before the log changes when no budgets plugin governs the agent.
  const report = raise !== undefined ? raiseBudget(agent, raise) : budgetUsage(agent);
  const message = continueAfterBudget(agent);
  await acknowledgeDurably(agent);
  return { status: 202, body: { budget: report, message, state: context.hub.state(agent.id) } };
}

async function stopBudget(context: ApiContext, [sessionId]: readonly string[]): Promise<ApiAnswer> {
  const agent = await context.live(sessionId!);
  // Refused (nothing written) while the agent runs, when nothing is paused, or without a budgets plugin.
  const stopped = stopAfterBudget(agent);
  return { body: { ...stopped, state: context.hub.state(agent.id) } };
}

function budgetRaise(value: unknown): BudgetRaise {
  const fields = objectBody(value);
  const raise: BudgetRaise = {};
  for (const scope of ['perTurn', 'perSession'] as const) {
    const change = fields[scope];
    if (change === undefined) continue;
    raise[scope] = budgetChange(change, scope);
  }
  for (const key of Object.keys(fields)) {
    if (key !== 'perTurn' && key !== 'perSession') {
      throw new HttpError(400, 'INVALID_REQUEST', `raise.${key} is not a budget scope (perTurn, perSession)`);
    }
  }
  return raise;
}

function budgetChange(value: unknown, scope: string): BudgetChange {
  const fields = objectBody(value);
  const change: BudgetChange = {};
  for (const [kind, limit] of Object.entries(fields)) {
    if (kind !== 'tokens' && kind !== 'costUsd' && kind !== 'steps') {
      throw new HttpError(400, 'INVALID_REQUEST', `raise.${scope}.${kind} is not a budget kind`);
    }
    if (limit !== null && (typeof limit !== 'number' || !Number.isFinite(limit) || limit <= 0)) {
      throw new HttpError(400, 'INVALID_REQUEST', `raise.${scope}.${kind} must be a positive number or null`);
    }
    change[kind] = limit;
  }
  return change;
}
