import type { LlmService, ModelInfo, TokenUsage } from '../../llm/index.ts';
import type { PricingLookup } from '../../session/index.ts';

/** Token counts summed over many responses (every field present). */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

/** Per-million-token prices of a model. */
export type ModelPrices = NonNullable<ModelInfo['pricing']>;

/** Zeroed totals. */
export function emptyUsage(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

/** Adds one response's usage (or other totals) into `total`, in place. */
export function addUsage(total: UsageTotals, usage: Readonly<TokenUsage> | Readonly<UsageTotals>): void {
  total.inputTokens += finite(usage.inputTokens);
  total.outputTokens += finite(usage.outputTokens);
  total.cacheReadTokens += finite(usage.cacheReadTokens);
  total.cacheWriteTokens += finite(usage.cacheWriteTokens);
  total.reasoningTokens += finite(usage.reasoningTokens);
}

/** Every token a response processed: input, cache reads and writes, and output (reasoning is part of output). */
export function totalTokens(usage: Readonly<TokenUsage> | Readonly<UsageTotals>): number {
  return (
    finite(usage.inputTokens) +
    finite(usage.cacheReadTokens) +
    finite(usage.cacheWriteTokens) +
    finite(usage.outputTokens)
  );
}

/** The US-dollar cost of a usage at a model's prices (cache prices fall back to the input price). */
export function costOf(usage: Readonly<TokenUsage> | Readonly<UsageTotals>, pricing: ModelPrices): number {
  const perToken = 1 / 1_000_000;
  return (
    (finite(usage.inputTokens) * pricing.input +
      finite(usage.cacheReadTokens) * (pricing.cachedInput ?? pricing.input) +
      finite(usage.cacheWriteTokens) * (pricing.cacheWrite ?? pricing.input) +
      finite(usage.outputTokens) * pricing.output) *
    perToken
  );
}

/** A cached pricing lookup through the adapters' `describeModel` (unknown providers have no pricing). */
export function pricingLookup(llm: LlmService): PricingLookup {
  const cache = new Map<string, ModelPrices | undefined>();
  return (provider, model) => {
    const key = `${provider}\u0000${model}`;
    if (cache.has(key)) return cache.get(key);
    let pricing: ModelPrices | undefined;
    try {
      pricing = llm.prepare({ provider, model }).model?.pricing;
    } catch {
      // An unregistered provider or a model its adapter refuses: its cost is unknown, not an error.
      pricing = undefined;
    }
    cache.set(key, pricing);
    return pricing;
  };
}

function finite(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
