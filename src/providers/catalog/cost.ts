import type { ModelInfo, TokenUsage } from '../../llm/index.ts';

/** A model's prices in US dollars per million tokens. */
export type ModelPricing = NonNullable<ModelInfo['pricing']>;

/**
 * The US-dollar cost of one response's usage: uncached input, cache reads (at the cached-input price,
 * else input), cache writes (at the cache-write price, else input) and output, which includes reasoning.
 */
export function costOfUsage(usage: TokenUsage, pricing: ModelPricing): number {
  const perToken = 1 / 1_000_000;
  const cost =
    usage.inputTokens * pricing.input +
    (usage.cacheReadTokens ?? 0) * (pricing.cachedInput ?? pricing.input) +
    (usage.cacheWriteTokens ?? 0) * (pricing.cacheWrite ?? pricing.input) +
    usage.outputTokens * pricing.output;
  return cost * perToken;
}

/** Totals of a log's responses: tokens, known cost, and how many responses had no price. */
export interface CostTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** US dollars, over the responses whose model has a price. */
  cost: number;
  /** Responses with usage whose model has no known price (their cost is not in `cost`). */
  unpricedResponses: number;
}

/** Cost of a whole log, and of each turn. */
export interface SessionCost {
  total: CostTotals;
  byTurn: Map<number, CostTotals>;
}

/** The minimum of a durable log entry this module reads (kept structural: providers do not import session). */
export interface UsageEventLike {
  readonly type: string;
  readonly data: unknown;
}

function emptyTotals(): CostTotals {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    cost: 0,
    unpricedResponses: 0,
  };
}

function add(totals: CostTotals, usage: TokenUsage, cost: number | undefined): void {
  totals.inputTokens += usage.inputTokens;
  totals.outputTokens += usage.outputTokens;
  totals.cacheReadTokens += usage.cacheReadTokens ?? 0;
  totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  if (cost === undefined) totals.unpricedResponses++;
  else totals.cost += cost;
}

/**
 * Sums the usage and cost of every `assistant/message` of a log, per turn and in total, pricing each
 * response by the model that produced it (`pricingOf(provider, model)`, undefined when unknown).
 */
export function sessionCost(
  events: Iterable<UsageEventLike>,
  pricingOf: (provider: string, model: string) => ModelPricing | undefined,
): SessionCost {
  const total = emptyTotals();
  const byTurn = new Map<number, CostTotals>();
  for (const event of events) {
    if (event.type !== 'assistant/message') continue;
    const data = event.data as {
      turn: number;
      usage?: TokenUsage;
      message: { source: { provider?: string; model?: string } };
    };
    if (data.usage === undefined) continue;
    const { provider, model } = data.message.source;
    const pricing = provider !== undefined && model !== undefined ? pricingOf(provider, model) : undefined;
    const cost = pricing !== undefined ? costOfUsage(data.usage, pricing) : undefined;
    add(total, data.usage, cost);
    let turn = byTurn.get(data.turn);
    if (turn === undefined) {
      turn = emptyTotals();
      byTurn.set(data.turn, turn);
    }
    add(turn, data.usage, cost);
  }
  return { total, byTurn };
}

/** Formats US dollars for display: four decimals under a cent, two otherwise. */
export function formatCost(dollars: number): string {
  if (dollars === 0) return '$0.00';
  return dollars < 0.01 ? `$${dollars.toFixed(4)}` : `$${dollars.toFixed(2)}`;
}
