import type { TokenUsage } from '../llm/index.ts';
import type { TurnUsage } from './transcript-item.ts';
import type { TranscriptPricing, UsageTotals } from './transcript-parts.ts';
import { addUsage, emptyUsage, priceOf } from './transcript-parts.ts';

/** The cost of a transcript's responses. */
export interface TranscriptCost {
  /** US dollars over the responses whose model has a price. */
  readonly usd: number;
  /** Responses with usage whose model has no known price. */
  readonly unpricedResponses: number;
}

/** The tokens one provider/model served, summed over its responses. */
export interface ModelUsageSum {
  readonly provider: string;
  readonly model: string;
  readonly usage: UsageTotals;
  responses: number;
}

/** What a ledger needs to go on counting from a point in the log: the session's running sums. */
export interface UsageCarry {
  readonly total: UsageTotals;
  readonly models: readonly ModelUsageSum[];
}

interface LedgerEntry {
  readonly turn: number;
  readonly usage: UsageTotals;
  readonly routes: { readonly provider: string; readonly model: string; readonly usage: TokenUsage }[];
}

/**
 * Tokens per turn and for the whole session, kept as responses arrive: adding a response costs O(1)
 * (a turn is found by number, its routes grow in place), the session total is a running sum. Cost is
 * priced from per-model sums (of the session, or of a turn), so a ledger continued from a carry prices
 * exactly what one that counted every response prices.
 */
export class TurnUsageLedger {
  #turns: LedgerEntry[] = [];
  readonly #byTurn = new Map<number, LedgerEntry>();
  readonly #turnModels = new Map<number, Map<string, ModelUsageSum>>();
  readonly #total: UsageTotals;
  readonly #models = new Map<string, ModelUsageSum>();

  constructor(carry?: UsageCarry) {
    this.#total = carry !== undefined ? { ...carry.total } : emptyUsage();
    for (const sum of carry?.models ?? []) {
      this.#models.set(routeKey(sum.provider, sum.model), { ...sum, usage: { ...sum.usage } });
    }
  }

  /** Tokens per turn, in the order turns first reported usage. */
  get turns(): readonly TurnUsage[] {
    return this.#turns;
  }

  /** Records one response's tokens for its turn and route. */
  add(turn: number, usage: TokenUsage, provider: string, model: string): void {
    let entry = this.#byTurn.get(turn);
    if (entry === undefined) {
      entry = { turn, usage: emptyUsage(), routes: [] };
      this.#byTurn.set(turn, entry);
      this.#turns.push(entry);
    }
    addUsage(entry.usage, usage);
    addUsage(this.#total, usage);
    entry.routes.push({ provider, model, usage });
    let models = this.#turnModels.get(turn);
    if (models === undefined) this.#turnModels.set(turn, (models = new Map()));
    addToSum(models, provider, model, usage, 1);
    addToSum(this.#models, provider, model, usage, 1);
  }

  /** Tokens of the whole session (a copy). */
  total(): TurnUsage['usage'] {
    return { ...this.#total };
  }

  /** The session's running sums (copies), for a ledger that goes on from here. */
  carry(): UsageCarry {
    return {
      total: { ...this.#total },
      models: [...this.#models.values()].map((sum) => ({ ...sum, usage: { ...sum.usage } })),
    };
  }

  /**
   * Puts the turns of an earlier part of the log before this ledger's (a turn both saw is merged); the
   * session sums stay (this ledger's carry already counted the earlier part).
   */
  prepend(earlier: TurnUsageLedger): void {
    const turns: LedgerEntry[] = [];
    for (const before of earlier.#turns) {
      const after = this.#byTurn.get(before.turn);
      const entry: LedgerEntry = {
        turn: before.turn,
        usage: { ...before.usage },
        routes: [...before.routes, ...(after?.routes ?? [])],
      };
      if (after !== undefined) addUsage(entry.usage, after.usage);
      const models = new Map<string, ModelUsageSum>();
      for (const source of [earlier.#turnModels.get(before.turn), this.#turnModels.get(before.turn)]) {
        for (const sum of source?.values() ?? []) {
          addToSum(models, sum.provider, sum.model, sum.usage, sum.responses);
        }
      }
      this.#byTurn.set(entry.turn, entry);
      this.#turnModels.set(entry.turn, models);
      turns.push(entry);
    }
    const merged = new Set(earlier.#turns.map((entry) => entry.turn));
    this.#turns = [...turns, ...this.#turns.filter((entry) => !merged.has(entry.turn))];
  }

  /** The cost of the session, or of one turn, at the given prices (provider/model → per million tokens). */
  cost(
    pricing: (provider: string, model: string) => TranscriptPricing | undefined,
    turn?: number,
  ): TranscriptCost {
    let usd = 0;
    let unpricedResponses = 0;
    const sums = turn !== undefined ? this.#turnModels.get(turn) : this.#models;
    for (const sum of sums?.values() ?? []) {
      const price = pricing(sum.provider, sum.model);
      if (price === undefined) unpricedResponses += sum.responses;
      else usd += priceOf(sum.usage, price);
    }
    return { usd, unpricedResponses };
  }
}

function routeKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

function addToSum(
  sums: Map<string, ModelUsageSum>,
  provider: string,
  model: string,
  usage: TokenUsage,
  responses: number,
): void {
  const key = routeKey(provider, model);
  let sum = sums.get(key);
  if (sum === undefined) sums.set(key, (sum = { provider, model, usage: emptyUsage(), responses: 0 }));
  addUsage(sum.usage, usage);
  sum.responses += responses;
}
