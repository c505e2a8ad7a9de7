import type { AssistantMessage, TokenUsage } from '../../llm/index.ts';
import type { PricingLookup, Session, SessionEventMap } from '../../session/index.ts';
import type { BudgetChange, BudgetKind, BudgetLimits } from './budget-events.ts';
import { costOf, totalTokens } from './usage-cost.ts';

/** Amounts spent, per kind. */
export interface BudgetSpend {
  tokens: number;
  costUsd: number;
  steps: number;
}

const kinds: readonly BudgetKind[] = ['tokens', 'costUsd', 'steps'];
const limitTypes: ReadonlySet<string> = new Set(['budget/raised']);
const spendingTypes: ReadonlySet<string> = new Set([
  'turn/start',
  'step/start',
  'assistant/message',
  'request/failed',
  'tool/result',
]);

/**
 * Reads a session's spending from its log incrementally: each call to `catchUp` consumes only the
 * events appended since the last one, so checking at every step boundary stays cheap.
 */
export class BudgetMeter {
  readonly session: BudgetSpend = { tokens: 0, costUsd: 0, steps: 0 };
  readonly turn: BudgetSpend & { number: number } = { number: 0, tokens: 0, costUsd: 0, steps: 0 };
  /** Limit changes recorded in the log by `budget/raised`, applied over the plugin's options. */
  readonly changes: { perTurn: BudgetChange; perSession: BudgetChange } = { perTurn: {}, perSession: {} };
  /** False once a response was priced by no adapter (its cost counted as 0). */
  costComplete = true;
  #seen = 0;
  #limitsSeen = 0;
  readonly #log: Session;
  readonly #pricing: PricingLookup;

  constructor(session: Session, pricing: PricingLookup) {
    this.#log = session;
    this.#pricing = pricing;
  }

  /**
   * Consumes the limit changes (`budget/raised`) appended since the last call: a scan of event types
   * that builds no other event, so a session with no limit in force never reads its spending.
   */
  catchUpLimits(): this {
    const log = this.#log.log;
    const length = log.length;
    for (
      let seq = log.nextOfType(limitTypes, this.#limitsSeen);
      seq >= 0;
      seq = log.nextOfType(limitTypes, seq + 1)
    ) {
      const data = log.at(seq)!.data as SessionEventMap['budget/raised'];
      Object.assign(this.changes.perTurn, data.perTurn);
      Object.assign(this.changes.perSession, data.perSession);
    }
    this.#limitsSeen = length;
    return this;
  }

  /** Consumes the events appended since the last call. */
  catchUp(): this {
    this.catchUpLimits();
    const log = this.#log.log;
    const length = log.length;
    // Only these events change the spending (limit changes are `catchUpLimits`'s).
    for (
      let seq = log.nextOfType(spendingTypes, this.#seen);
      seq >= 0;
      seq = log.nextOfType(spendingTypes, seq + 1)
    ) {
      const event = log.at(seq)!;
      switch (event.type) {
        case 'turn/start':
          Object.assign(this.turn, {
            number: (event.data as SessionEventMap['turn/start']).turn,
            tokens: 0,
            costUsd: 0,
            steps: 0,
          });
          break;
        case 'step/start':
          this.turn.steps++;
          this.session.steps++;
          break;
        case 'assistant/message':
        case 'request/failed': {
          // A failed attempt that reported usage was billed too.
          const data =
            event.type === 'request/failed'
              ? (event.data as { usage?: TokenUsage; provider?: string; model?: string })
              : (() => {
                  const reply = event.data as { message: AssistantMessage; usage?: TokenUsage };
                  return { usage: reply.usage, ...reply.message.source };
                })();
          if (data.usage === undefined || data.provider === undefined || data.model === undefined) break;
          const tokens = totalTokens(data.usage);
          this.turn.tokens += tokens;
          this.session.tokens += tokens;
          const prices = this.#pricing(data.provider, data.model);
          if (prices === undefined) {
            if (tokens > 0) this.costComplete = false;
            break;
          }
          const cost = costOf(data.usage, prices);
          this.turn.costUsd += cost;
          this.session.costUsd += cost;
          break;
        }
        case 'tool/result': {
          // Tools that spend model tokens themselves (subagents) report it as `meta.usage` / `meta.costUsd`.
          const meta = (event.data as { meta?: unknown }).meta;
          if (typeof meta !== 'object' || meta === null) break;
          const reported = meta as { usage?: unknown; costUsd?: unknown };
          if (typeof reported.usage !== 'object' || reported.usage === null) break;
          const tokens = totalTokens(reported.usage as TokenUsage);
          this.turn.tokens += tokens;
          this.session.tokens += tokens;
          if (typeof reported.costUsd === 'number' && Number.isFinite(reported.costUsd)) {
            this.turn.costUsd += reported.costUsd;
            this.session.costUsd += reported.costUsd;
          } else if (tokens > 0) {
            this.costComplete = false;
          }
          break;
        }
        default:
          break;
      }
    }
    this.#seen = length;
    return this;
  }

  /** True when any limit is in force: the plugin's, with the log's changes applied (after `catchUpLimits`). */
  hasLimits(base: { perTurn?: BudgetLimits; perSession?: BudgetLimits }): boolean {
    const limits = this.limits(base);
    return kinds.some((kind) => limits.perTurn[kind] !== undefined || limits.perSession[kind] !== undefined);
  }

  /** The limits in force: the plugin's, with the log's changes applied. */
  limits(base: { perTurn?: BudgetLimits; perSession?: BudgetLimits }): {
    perTurn: BudgetLimits;
    perSession: BudgetLimits;
  } {
    return {
      perTurn: applyChange(base.perTurn, this.changes.perTurn),
      perSession: applyChange(base.perSession, this.changes.perSession),
    };
  }
}

function applyChange(base: BudgetLimits | undefined, change: BudgetChange): BudgetLimits {
  const limits: BudgetLimits = { ...base };
  for (const kind of kinds) {
    const value = change[kind];
    if (value === null) delete limits[kind];
    else if (value !== undefined) limits[kind] = value;
  }
  return limits;
}
