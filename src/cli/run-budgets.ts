import type {
  BudgetKind,
  BudgetLimitName,
  BudgetLimits,
  BudgetRaise,
  BudgetsPluginOptions,
} from '../index.ts';
import { usageError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import type { ParsedCommand } from './command-line.ts';
import { positiveIntegerOption } from './command-line.ts';
import { runSpec } from './command-specs.ts';
import { describeBudget, roundCost } from './budget-text.ts';

/** The `rein run` option that sets each kind of budget. */
const budgetFlags: Readonly<Record<BudgetKind, string>> = {
  tokens: 'budget-tokens',
  costUsd: 'budget-cost',
  steps: 'budget-steps',
};

/** A `budget/reached` record as the run saw it. */
export interface ReachedBudget {
  limit: BudgetLimitName;
  used: number;
  max: number;
}

/** Reads `--budget-tokens`, `--budget-cost` and `--budget-steps` into per-turn limits; undefined when none is given. */
export function budgetOptions(values: ParsedCommand['values']): BudgetsPluginOptions | undefined {
  const perTurn: BudgetLimits = {};
  const tokens = positiveIntegerOption(runSpec, values, budgetFlags.tokens);
  if (tokens !== undefined) perTurn.tokens = tokens;
  const steps = positiveIntegerOption(runSpec, values, budgetFlags.steps);
  if (steps !== undefined) perTurn.steps = steps;
  const cost = values[budgetFlags.costUsd];
  if (cost !== undefined) {
    const text = String(cost);
    const value = Number(text);
    if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text) || !Number.isFinite(value) || value <= 0) {
      throw usageError('run', `option '--budget-cost' needs a positive amount of US dollars, not '${text}'`);
    }
    perTurn.costUsd = value;
  }
  return Object.keys(perTurn).length > 0 ? { perTurn } : undefined;
}

/** The raise that doubles the limit that was reached. */
export function doubledLimit(reached: ReachedBudget): BudgetRaise {
  const [scope, kind] = reached.limit.split('.') as ['turn' | 'session', BudgetKind];
  const max = reached.max * 2;
  return scope === 'turn' ? { perTurn: { [kind]: max } } : { perSession: { [kind]: max } };
}

/** What to tell a user whose run paused at a budget: the limit and the command that continues it. */
export function budgetPauseMessage(reached: ReachedBudget, sessionId: string): string {
  const kind = reached.limit.split('.')[1] as BudgetKind;
  const doubled = reached.max * 2;
  const value = kind === 'costUsd' ? roundCost(doubled) : String(doubled);
  return (
    `rein: budget reached (${describeBudget(reached.limit, reached.used, reached.max)}); the work is paused, not lost.\n` +
    `rein: continue with: rein run --resume ${sessionId} --${budgetFlags[kind]} ${value} "continue"\n`
  );
}

/**
 * Asks on the terminal whether to raise the reached limit and continue; resolves false for anything but
 * yes, and when the signal aborts (Ctrl-C) or stdin closes.
 */
export async function askToRaise(io: CliIo, reached: ReachedBudget, signal: AbortSignal): Promise<boolean> {
  // Node's readline loads with the first question (see terminal-approver.ts).
  const { createInterface } = await import('node:readline');
  if (signal.aborted) return false;
  io.stderr.write(
    `\nBudget reached (${describeBudget(reached.limit, reached.used, reached.max)}). Raise and continue? [y/N] `,
  );
  // Cooked mode, as for approvals: Ctrl-C stays the run's SIGINT, which aborts this question.
  const rl = createInterface({ input: io.stdin, terminal: false });
  let onAbort: (() => void) | undefined;
  try {
    const answer = await new Promise<string | undefined>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(undefined));
      onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    if (answer === undefined || signal.aborted) {
      io.stderr.write('\n');
      return false;
    }
    return ['y', 'yes'].includes(answer.trim().toLowerCase());
  } finally {
    // The run's signal outlives the question: its listener goes with it.
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    rl.close();
  }
}
