import type { PausedBudget } from './sdk.ts';

/** The raised maximum: double the old one, and at least enough headroom above what was already used. */
export function raisedMax(paused: PausedBudget): number {
  const doubled = Math.max(paused.max * 2, paused.used + paused.max);
  return paused.limit.endsWith('.costUsd') ? doubled : Math.ceil(doubled);
}

/** The `raise` body of `POST /budget/continue` for a paused limit (`session.tokens` → perSession.tokens). */
export function raiseFor(paused: PausedBudget): Record<string, Record<string, number>> {
  const [scope, kind] = paused.limit.split('.');
  return { [scope === 'turn' ? 'perTurn' : 'perSession']: { [kind ?? '']: raisedMax(paused) } };
}
