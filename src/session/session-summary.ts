import { messageText } from '../llm/index.ts';
import type { AssistantMessage, TokenUsage, UserMessage } from '../llm/index.ts';
import type { SessionHeader } from './session.ts';
import type { AnySessionEvent } from './session-event.ts';
import type { PricingLookup, SessionSummary } from './session-store.ts';

/** Token totals of one provider and model. */
export interface RouteUsage {
  provider: string;
  model: string;
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
}

/** What a listing row needs from a log, before pricing: the row without its cost, and usage per route. */
export interface SessionTally {
  summary: SessionSummary;
  /** Token totals per provider and model, in the order each was first billed. */
  routes: RouteUsage[];
}

/** The events a tally reads: an array, or a session log read by type without building every event. */
type TallySource =
  | readonly AnySessionEvent[]
  | {
      readonly length: number;
      typeAt(seq: number): string | undefined;
      at(seq: number): AnySessionEvent | undefined;
    };

/**
 * Builds a listing row from a header and its events: title from the first prompt, turn count, times,
 * token totals, and the cost when `pricing` knows every priced model's rates.
 */
export function summarizeSession(
  header: SessionHeader,
  events: TallySource,
  pricing?: PricingLookup,
): SessionSummary {
  return priceTally(tallySession(header, events), pricing);
}

/** The unpriced tally of a log (what a durable listing cache keeps: prices may change, usage does not). */
export function tallySession(
  header: SessionHeader,
  events: TallySource,
  /** The tally of the first `events` events, already made: only the events after them are read. */
  from?: { tally: SessionTally; events: number },
): SessionTally {
  const before = from?.tally.summary;
  let turns = before?.turns ?? 0;
  let title = before === undefined ? header.title : (before.title ?? header.title);
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  if (before?.usage !== undefined) Object.assign(usage, before.usage);
  const routes: RouteUsage[] = (from?.tally.routes ?? []).map((route) => ({
    provider: route.provider,
    model: route.model,
    usage: { ...route.usage },
  }));
  const length = events.length;
  const typeAt = Array.isArray(events)
    ? (seq: number) => (events as readonly AnySessionEvent[])[seq]!.type
    : (seq: number) => (events as Exclude<TallySource, readonly AnySessionEvent[]>).typeAt(seq)!;
  const at = Array.isArray(events)
    ? (seq: number) => (events as readonly AnySessionEvent[])[seq]!
    : (seq: number) => (events as Exclude<TallySource, readonly AnySessionEvent[]>).at(seq)!;
  for (let seq = from?.events ?? 0; seq < length; seq++) {
    const type = typeAt(seq);
    if (type === 'turn/start') turns++;
    else if (type === 'assistant/message' || type === 'request/failed') {
      const data = billedUsage(at(seq));
      if (data === undefined) continue;
      let route = routes.find((entry) => entry.provider === data.provider && entry.model === data.model);
      if (route === undefined) {
        route = {
          provider: data.provider,
          model: data.model,
          usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        };
        routes.push(route);
      }
      for (const total of [usage, route.usage]) {
        total.inputTokens += data.usage.inputTokens;
        total.outputTokens += data.usage.outputTokens;
        total.cacheReadTokens += data.usage.cacheReadTokens ?? 0;
        total.cacheWriteTokens += data.usage.cacheWriteTokens ?? 0;
      }
    } else if (title === undefined && type === 'user/message') {
      const message = at(seq).data as UserMessage;
      if (message.source.kind === 'user') title = messageText(message).split('\n', 1)[0]!.slice(0, 80);
    }
  }
  const summary: SessionSummary = {
    id: header.id,
    createdAt: header.createdAt,
    updatedAt: length > 0 ? at(length - 1).time : header.createdAt,
    turns,
    events: length,
    usage,
  };
  if (title !== undefined) summary.title = title;
  if (header.cwd !== undefined) summary.cwd = header.cwd;
  if (header.parentSession !== undefined) summary.parentSession = header.parentSession;
  return { summary, routes };
}

/** A tally's listing row, with the cost when `pricing` knows every billed model's rates. */
export function priceTally(tally: SessionTally, pricing?: PricingLookup): SessionSummary {
  const summary: SessionSummary = { ...tally.summary, usage: { ...tally.summary.usage! } };
  if (pricing === undefined) return summary;
  let cost = 0;
  for (const route of tally.routes) {
    const price = pricing(route.provider, route.model);
    // One unpriced model makes the total unknown rather than silently low.
    if (price === undefined) return summary;
    cost += callCost(route.usage, price);
  }
  summary.cost = cost;
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
