import type { Agent, AgentRegistry, HarnessPlugin, PluginHost } from '../../agent/index.ts';
import { enter, reject } from '../../agent/index.ts';
import type { UserMessage } from '../../llm/index.ts';
import { HarnessError, createUserMessage } from '../../llm/index.ts';
import type { PricingLookup, Session } from '../../session/index.ts';
import type {
  BudgetChange,
  BudgetKind,
  BudgetLimitName,
  BudgetLimits,
  BudgetScope,
} from './budget-events.ts';
import type { BudgetSpend } from './budget-meter.ts';
import { BudgetMeter } from './budget-meter.ts';
import { pricingLookup } from './usage-cost.ts';

/** Options of `budgetsPlugin`: limits per turn and per session (omitted kinds are unlimited). */
export interface BudgetsPluginOptions {
  perTurn?: BudgetLimits;
  perSession?: BudgetLimits;
}

/** Limits in force for an agent and what it has spent against them. */
export interface BudgetReport {
  limits: { perTurn: BudgetLimits; perSession: BudgetLimits };
  used: { turn: BudgetSpend; session: BudgetSpend };
  /** False when some response had no known prices (its cost was counted as 0). */
  costComplete: boolean;
}

/** A change of limits for `raiseBudget`. */
export interface BudgetRaise {
  perTurn?: BudgetChange;
  perSession?: BudgetChange;
}

interface Installation {
  readonly registry: AgentRegistry;
  readonly options: BudgetsPluginOptions;
  readonly meterOf: (session: Session) => BudgetMeter;
  /** The session's meter with its limit changes read, its spending not necessarily. */
  readonly limitsOf: (session: Session) => BudgetMeter;
  /** Ids of the continuation notes this plugin queued. */
  readonly notes: Set<string>;
}

const installations = new Set<Installation>();

const order: readonly [BudgetScope, BudgetKind][] = [
  ['turn', 'tokens'],
  ['turn', 'costUsd'],
  ['turn', 'steps'],
  ['session', 'tokens'],
  ['session', 'costUsd'],
  ['session', 'steps'],
];

/**
 * Budgets that pause rather than kill: the step in progress always finishes; at the next step boundary
 * after a limit is reached, `agent/pre-step` rejects with a durable `budget/reached { limit, used }`,
 * keeping the claimed input queued. `raiseBudget` and `continueAfterBudget` resume the work as a new turn.
 */
export function budgetsPlugin(options: BudgetsPluginOptions): HarnessPlugin {
  const base: BudgetsPluginOptions = {};
  if (options.perTurn !== undefined) base.perTurn = validated(options.perTurn, 'perTurn');
  if (options.perSession !== undefined) base.perSession = validated(options.perSession, 'perSession');
  return {
    name: 'budgets',
    setup(host: PluginHost) {
      const pricing: PricingLookup = pricingLookup(host.llm);
      const meters = new WeakMap<Session, BudgetMeter>();
      const installation: Installation = {
        registry: host.registry,
        options: base,
        notes: new Set(),
        meterOf: (session) => installation.limitsOf(session).catchUp(),
        limitsOf: (session) => {
          let meter = meters.get(session);
          if (meter === undefined) {
            meter = new BudgetMeter(session, pricing);
            meters.set(session, meter);
          }
          return meter.catchUpLimits();
        },
      };
      const dispose = host.hooks.on('agent/pre-step', async (payload, next) => {
        const { agent, messages, turn, step } = payload;
        const meter = installation.limitsOf(agent.session);
        // A continuation note is steered at the tail of next-step; anything claimed after it came from
        // next-turn (a follow-up queued while paused) and goes back there, to run after the resumed work.
        const noteIds = new Set(messages.filter((m) => installation.notes.has(m.id)).map((m) => m.id));
        // A claimed note is spent either way: it enters now, or a rejection drops it.
        for (const id of noteIds) installation.notes.delete(id);
        const noteIndex = findLastIndex(messages, (message) => noteIds.has(message.id));
        const returned = step === 1 && noteIndex >= 0 ? messages.slice(noteIndex + 1) : [];
        // By id, not identity: an outer listener may have handed inner ones rewritten copies.
        const returnedIds = new Set(returned.map((message) => message.id));
        // With no limit in force nothing can be reached: the spending (the whole log) is not read.
        const reached = meter.hasLimits(base) ? firstReached(meter.catchUp(), meter.limits(base)) : undefined;
        if (reached !== undefined) {
          agent.session.append('budget/reached', { turn, step, ...reached });
          const kept = messages.filter((message) => !noteIds.has(message.id) && !returnedIds.has(message.id));
          if (kept.length > 0) agent.inbox.splice('next-step', 0, 0, kept);
          if (returned.length > 0) agent.inbox.splice('next-turn', 0, 0, returned);
          return reject();
        }
        if (returned.length > 0) agent.inbox.splice('next-turn', 0, 0, returned);
        const decision = await next();
        if (returned.length === 0 || decision.kind !== 'enter') return decision;
        return enter(decision.messages.filter((message) => !returnedIds.has(message.id)));
      });
      installations.add(installation);
      return () => {
        installations.delete(installation);
        dispose();
      };
    },
  };
}

/** Changes an agent's limits (recorded durably as `budget/raised`); with `continue`, resumes the paused work. */
export function raiseBudget(
  agent: Agent,
  raise: BudgetRaise,
  options: { continue?: boolean } = {},
): BudgetReport {
  const installation = installationOf(agent);
  const data: BudgetRaise = {};
  if (raise.perTurn !== undefined) data.perTurn = validatedChange(raise.perTurn, 'perTurn');
  if (raise.perSession !== undefined) data.perSession = validatedChange(raise.perSession, 'perSession');
  agent.session.append('budget/raised', data);
  if (options.continue === true) continueAfterBudget(agent);
  return report(installation, agent);
}

/**
 * Resumes work paused by a budget as a new turn: steers a continuation note, so the turn enters the
 * kept input plus the note. Throws `AGENT_BUSY` while the agent runs.
 */
export function continueAfterBudget(agent: Agent, options: { text?: string } = {}): UserMessage {
  const installation = installationOf(agent);
  if (agent.status === 'running') {
    throw new HarnessError('AGENT_BUSY', `agent ${agent.id} is running; nothing is paused`);
  }
  const note = createUserMessage(
    options.text ?? 'The budget was raised. Continue the work where you left off.',
    { kind: 'plugin', plugin: 'budgets', form: 'continue' },
  );
  installation.notes.add(note.id);
  return agent.steer(note);
}

/**
 * Ends work paused by a budget without resuming it: records `budget/stopped` naming the pause's
 * `budget/reached`, then drops the input the pause kept queued (a cancellation of the idle agent).
 * Throws `AGENT_BUSY` while the agent runs and `NOTHING_PAUSED` when no budget pauses its work.
 */
export function stopAfterBudget(agent: Agent): { reachedSeq: number } {
  installationOf(agent);
  if (agent.status === 'running') {
    throw new HarnessError('AGENT_BUSY', `agent ${agent.id} is running; nothing is paused`);
  }
  const reachedSeq = pausedBudgetSeq(agent.session);
  if (reachedSeq === undefined) {
    throw new HarnessError('NOTHING_PAUSED', `no budget pauses the work of agent ${agent.id}`);
  }
  agent.session.append('budget/stopped', { reachedSeq });
  agent.cancel({ kind: 'user' });
  return { reachedSeq };
}

/** The seq of the `budget/reached` that pauses the session's work: one after the last turn start, not stopped. */
function pausedBudgetSeq(session: Session): number | undefined {
  const log = session.log;
  for (let seq = log.length - 1; seq >= 0; seq--) {
    const type = log.typeAt(seq);
    if (type === 'turn/start' || type === 'budget/stopped') return undefined;
    if (type === 'budget/reached') return seq;
  }
  return undefined;
}

/** The limits in force for an agent and its spending so far. */
export function budgetUsage(agent: Agent): BudgetReport {
  return report(installationOf(agent), agent);
}

function report(installation: Installation, agent: Agent): BudgetReport {
  const meter = installation.meterOf(agent.session);
  const { number: _number, ...turn } = meter.turn;
  return {
    limits: meter.limits(installation.options),
    used: { turn, session: { ...meter.session } },
    costComplete: meter.costComplete,
  };
}

function firstReached(
  meter: BudgetMeter,
  limits: { perTurn: BudgetLimits; perSession: BudgetLimits },
): { limit: BudgetLimitName; used: number; max: number } | undefined {
  for (const [scope, kind] of order) {
    const max = (scope === 'turn' ? limits.perTurn : limits.perSession)[kind];
    if (max === undefined) continue;
    const used = (scope === 'turn' ? meter.turn : meter.session)[kind];
    if (used >= max) return { limit: `${scope}.${kind}`, used, max };
  }
  return undefined;
}

function installationOf(agent: Agent): Installation {
  for (const installation of installations) {
    if (installation.registry.get(agent.id) === agent) return installation;
  }
  throw new HarnessError('BUDGETS_NOT_INSTALLED', `no budgets plugin governs agent ${agent.id}`);
}

function validated(limits: BudgetLimits, where: string): BudgetLimits {
  const out: BudgetLimits = {};
  for (const kind of ['tokens', 'costUsd', 'steps'] as const) {
    const value = limits[kind];
    if (value === undefined) continue;
    assertLimit(kind, value, where);
    out[kind] = value;
  }
  return out;
}

function validatedChange(change: BudgetChange, where: string): BudgetChange {
  const out: BudgetChange = {};
  for (const kind of ['tokens', 'costUsd', 'steps'] as const) {
    const value = change[kind];
    if (value === undefined) continue;
    if (value !== null) assertLimit(kind, value, where);
    out[kind] = value;
  }
  return out;
}

function assertLimit(kind: BudgetKind, value: number, where: string): void {
  const valid =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value > 0 &&
    (kind === 'costUsd' || Number.isSafeInteger(value));
  if (!valid) {
    throw new HarnessError(
      'INVALID_BUDGET',
      `${where}.${kind} must be a positive ${kind === 'costUsd' ? 'number' : 'integer'}`,
    );
  }
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let index = items.length - 1; index >= 0; index--) if (predicate(items[index]!)) return index;
  return -1;
}
