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

interface LedgerEntry {
  readonly turn: number;
  readonly usage: UsageTotals;
  readonly routes: { readonly provider: string; readonly model: string; readonly usage: TokenUsage }[];
}

/**
 * Tokens per turn and for the whole session, kept as responses arrive: adding a response costs O(1)
 * (a turn is found by number, its routes grow in place), the session total is a running sum.
 */
export class TurnUsageLedger {
  readonly #turns: LedgerEntry[] = [];
  readonly #byTurn = new Map<number, LedgerEntry>();
  readonly #total = emptyUsage();

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
  }

  /** Tokens of the whole session (a copy). */
  total(): TurnUsage['usage'] {
    return { ...this.#total };
  }

  /** The cost of the session, or of one turn, at the given prices (provider/model → per million tokens). */
  cost(
    pricing: (provider: string, model: string) => TranscriptPricing | undefined,
    turn?: number,
  ): TranscriptCost {
    let usd = 0;
    let unpricedResponses = 0;
    const entries =
      turn !== undefined ? [this.#byTurn.get(turn)].filter((entry) => entry !== undefined) : this.#turns;
    for (const entry of entries) {
      for (const route of entry.routes) {
        const price = pricing(route.provider, route.model);
        if (price === undefined) unpricedResponses += 1;
        else usd += priceOf(route.usage, price);
      }
    }
    return { usd, unpricedResponses };
  }
}
