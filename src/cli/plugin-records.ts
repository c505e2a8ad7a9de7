import type { AnySessionEvent, BudgetLimitName, BudgetRaise, GoalStopReason } from '../index.ts';

const stopReasons: Readonly<Record<GoalStopReason, string>> = {
  'round-limit': 'it used all its continuation rounds without being marked complete',
  'no-progress': 'the last round made no progress (no tool effects, nothing new said)',
  cancelled: 'the run was cancelled',
  cleared: 'it was cleared',
  replaced: 'a new goal replaced it',
};

/**
 * One readable line for a goal, repetition-guard or budget record (`goal/*`, `guard/stopped`,
 * `budget/*`); undefined for any other event.
 */
export function describePluginRecord(event: AnySessionEvent): string | undefined {
  switch (event.type) {
    case 'goal/set': {
      const data = event.data as { objective: string; maxRounds: number };
      return `◎ goal set: ${oneLine(data.objective)} (up to ${data.maxRounds} continuation ${plural(data.maxRounds, 'round')})`;
    }
    case 'goal/continued': {
      const data = event.data as { round: number };
      return `◎ goal not marked complete yet — continuation round ${data.round}`;
    }
    case 'goal/completed': {
      const data = event.data as { evidence: string; rounds: number };
      return `✓ goal completed after ${data.rounds} continuation ${plural(data.rounds, 'round')}: ${shorten(data.evidence, 200)}`;
    }
    case 'goal/stopped': {
      const data = event.data as { reason: GoalStopReason; rounds: number };
      return `■ goal stopped (${data.reason}): ${stopReasons[data.reason] ?? data.reason}`;
    }
    case 'guard/stopped': {
      const data = event.data as { name: string; count: number; message: string };
      return `■ repetition guard stopped the turn: ${data.name} called ${data.count} times with the same arguments — ${shorten(data.message, 200)}`;
    }
    case 'budget/reached': {
      const data = event.data as { limit: BudgetLimitName; used: number; max: number };
      return `■ budget reached (${describeBudget(data.limit, data.used, data.max)}); the work is paused`;
    }
    case 'budget/raised':
      return `◎ budget changed: ${describeRaise(event.data as BudgetRaise)}`;
    case 'budget/stopped':
      return '■ stopped at the budget: the paused work was dropped';
    default:
      return undefined;
  }
}

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

function describeRaise(raise: BudgetRaise): string {
  const parts: string[] = [];
  for (const [scope, change] of [
    ['turn', raise.perTurn],
    ['session', raise.perSession],
  ] as const) {
    for (const [kind, value] of Object.entries(change ?? {})) {
      const limit = `${scope}.${kind}` as BudgetLimitName;
      parts.push(value === null ? `${limit} unlimited` : `${limit} ${budgetAmount(limit, value)}`);
    }
  }
  return parts.length > 0 ? parts.join(', ') : 'no change';
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

function shorten(text: string, max: number): string {
  const flat = oneLine(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
