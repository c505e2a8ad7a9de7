import type { PausedBudget, TranscriptItem, TranscriptPricing } from '../internal.ts';
import { budgetRecordView, costOf } from '../internal.ts';
import { truncateToWidth, visibleWidth } from '@mariozechner/pi-tui';
import type { ChatSession } from './chat-session.ts';
import type { TuiTheme } from './tui-theme.ts';

const spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The facts the status line shows, read from the chat (pure, for tests and the renderer). */
export interface StatusFacts {
  readonly route: string;
  readonly mode: string;
  readonly running: boolean;
  readonly activity: string | undefined;
  readonly contextTokens: number | undefined;
  readonly contextWindow: number | undefined;
  readonly turnCost: number | undefined;
  readonly sessionCost: number | undefined;
  readonly retryInSeconds: number | undefined;
  readonly paused: PausedBudget | undefined;
}

/** Reads the status facts of a chat at a moment. */
export function statusFacts(chat: ChatSession, now: number): StatusFacts {
  const route = chat.currentRoute;
  const pricing = (provider: string, model: string): TranscriptPricing | undefined => {
    try {
      return chat.harness.llm.prepare({ provider, model }).model?.pricing;
    } catch {
      // A route whose provider is gone has no known price.
      return undefined;
    }
  };
  let contextWindow: number | undefined;
  try {
    contextWindow = chat.harness.llm.prepare(route).model?.contextWindow;
  } catch {
    // An unknown route shows no window.
    contextWindow = undefined;
  }
  const transcript = chat.transcript;
  const lastTurn = transcript.turns.at(-1);
  let turnCost: number | undefined = 0;
  if (lastTurn !== undefined) {
    turnCost = 0;
    for (const served of lastTurn.routes) {
      const price = pricing(served.provider, served.model);
      if (price === undefined) {
        turnCost = undefined;
        break;
      }
      turnCost += costOf(served.usage, price);
    }
  }
  const cost = transcript.cost(pricing);
  const activity = transcript.activity;
  return {
    route: `${route.provider}/${route.model}`,
    mode: chat.mode,
    running: chat.agent.status === 'running',
    activity:
      activity.kind === 'idle'
        ? undefined
        : activity.kind === 'tool' || activity.kind === 'approval'
          ? `${activity.kind} ${activity.name}`
          : activity.kind,
    contextTokens: contextTokensOf(transcript.items),
    contextWindow,
    turnCost,
    sessionCost: cost.unpricedResponses > 0 && cost.usd === 0 ? undefined : cost.usd,
    retryInSeconds:
      chat.retryUntil !== undefined ? Math.max(0, Math.ceil((chat.retryUntil - now) / 1000)) : undefined,
    paused: transcript.stateOf(budgetRecordView).paused,
  };
}

/** The tokens of the latest response's request and answer: what the next request starts from. */
export function contextTokensOf(items: readonly TranscriptItem[]): number | undefined {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!;
    if (item.kind !== 'assistant' || item.usage === undefined) continue;
    const usage = item.usage;
    return (
      usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens
    );
  }
  return undefined;
}

/** The one-line status bar: model · approval mode · context · costs · activity, retries and pauses. */
export function statusLine(facts: StatusFacts, theme: TuiTheme, width: number, frame: number): string {
  const parts: string[] = [theme.bold(facts.route), facts.mode];
  if (facts.contextTokens !== undefined) {
    const window = facts.contextWindow;
    parts.push(
      window !== undefined && window > 0
        ? `ctx ${compact(facts.contextTokens)}/${compact(window)} ${Math.round((facts.contextTokens / window) * 100)}%`
        : `ctx ${compact(facts.contextTokens)}`,
    );
  } else parts.push('ctx 0');
  parts.push(`turn ${money(facts.turnCost)}`, `session ${money(facts.sessionCost)}`);
  if (facts.retryInSeconds !== undefined) parts.push(theme.warning(`↻ retry in ${facts.retryInSeconds}s`));
  if (facts.paused !== undefined) {
    parts.push(
      theme.warning(`⏸ budget ${facts.paused.limit} ${facts.paused.used}/${facts.paused.max} — paused`),
    );
  }
  if (facts.running) {
    parts.push(theme.accent(`${spinner[frame % spinner.length]} ${facts.activity ?? 'running'}`));
  } else parts.push(theme.dim('idle'));
  const content = truncateToWidth(` ${parts.join(' · ')} `, width);
  return theme.inverse(content + ' '.repeat(Math.max(0, width - visibleWidth(content))));
}

function compact(tokens: number): string {
  if (tokens >= 1_000_000) return `${(tokens / 1_000_000).toFixed(1)}M`;
  if (tokens >= 1000) return `${(tokens / 1000).toFixed(1)}k`;
  return String(tokens);
}

function money(usd: number | undefined): string {
  if (usd === undefined) return '$?';
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}
