import { messageText } from '../llm/index.ts';
import type { AssistantMessage, TokenUsage, UserMessage } from '../llm/index.ts';
import type { SessionHeader } from './session.ts';
import type { AnySessionEvent } from './session-event.ts';
import type { PricingLookup, SessionSummary } from './session-store.ts';

/**
 * Builds a listing row from a header and its events: title from the first prompt, turn count, times,
 * token totals, and the cost when `pricing` knows every priced model's rates.
 */
export function summarizeSession(
  header: SessionHeader,
  events: readonly AnySessionEvent[],
  pricing?: PricingLookup,
): SessionSummary {
  let turns = 0;
  let title = header.title;
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let cost: number | undefined = pricing !== undefined ? 0 : undefined;
  for (const event of events) {
    if (event.type === 'turn/start') turns++;
    else if (event.type === 'assistant/message' || event.type === 'request/failed') {
      const data = billedUsage(event);
      if (data === undefined) continue;
      usage.inputTokens += data.usage.inputTokens;
      usage.outputTokens += data.usage.outputTokens;
      usage.cacheReadTokens += data.usage.cacheReadTokens ?? 0;
      usage.cacheWriteTokens += data.usage.cacheWriteTokens ?? 0;
      if (cost !== undefined) {
        const price = pricing?.(data.provider, data.model);
        // One unpriced model makes the total unknown rather than silently low.
        cost = price === undefined ? undefined : cost + callCost(data.usage, price);
      }
    } else if (title === undefined && event.type === 'user/message') {
      const message = event.data as UserMessage;
      if (message.source.kind === 'user') title = messageText(message).split('\n', 1)[0]!.slice(0, 80);
    }
  }
  const summary: SessionSummary = {
    id: header.id,
    createdAt: header.createdAt,
    updatedAt: events.length > 0 ? events[events.length - 1]!.time : header.createdAt,
    turns,
    events: events.length,
    usage,
  };
  if (title !== undefined) summary.title = title;
  if (header.cwd !== undefined) summary.cwd = header.cwd;
  if (header.parentSession !== undefined) summary.parentSession = header.parentSession;
  if (cost !== undefined) summary.cost = cost;
  return summary;
}

function callCost(
  usage: TokenUsage,
  price: { input: number; cachedInput?: number; cacheWrite?: number; output: number },
): number {
  // Input and cache counts are disjoint (TokenUsage), so each is priced once at its own rate.
  return (
    (usage.inputTokens * price.input +
      (usage.cacheReadTokens ?? 0) * (price.cachedInput ?? price.input) +
      (usage.cacheWriteTokens ?? 0) * (price.cacheWrite ?? price.input) +
      usage.outputTokens * price.output) /
    1_000_000
  );
}

/** The tokens an event billed and the route that billed them: a reply, or a failed attempt that reported usage. */
function billedUsage(
  event: AnySessionEvent,
): { usage: TokenUsage; provider: string; model: string } | undefined {
  if (event.type === 'request/failed') {
    const data = event.data as { usage?: TokenUsage; provider?: string; model?: string };
    if (data.usage === undefined || data.provider === undefined || data.model === undefined) return undefined;
    return { usage: data.usage, provider: data.provider, model: data.model };
  }
  const data = event.data as { message: AssistantMessage; usage?: TokenUsage };
  if (data.usage === undefined) return undefined;
  return { usage: data.usage, provider: data.message.source.provider, model: data.message.source.model };
}
