import type { AssistantMessage, TokenUsage } from '../../llm/index.ts';
import { messageText } from '../../llm/index.ts';
import type { PricingLookup, Session, TurnEndReason } from '../../session/index.ts';
import type { UsageTotals } from '../budgets/usage-cost.ts';
import { addUsage, costOf, emptyUsage } from '../budgets/usage-cost.ts';

/** What a finished child left behind: how its last turn ended, its final answer, and what it spent. */
export interface ChildOutcome {
  /** The reason of the child's last `turn/end`; undefined when it never ran a turn. */
  readonly reason: TurnEndReason | undefined;
  /** The text of its last assistant message that said something; empty when none did. */
  readonly text: string;
  /** Its token usage, including the usage its own subagents reported. */
  readonly usage: UsageTotals;
  /** Its cost in US dollars; undefined unless every priced response had known prices. */
  readonly costUsd: number | undefined;
}

/** The `meta` a task result carries, so UIs can open the child and account for its cost. */
export interface TaskResultMeta {
  childSessionId: string;
  /** The call's short label, for the tool card. */
  description?: string;
  usage: UsageTotals;
  costUsd?: number;
}

/** Reads a child's outcome from its log. */
export function readChildOutcome(session: Session, pricing: PricingLookup): ChildOutcome {
  let reason: TurnEndReason | undefined;
  let text = '';
  const usage = emptyUsage();
  let cost = 0;
  let costKnown = true;
  for (const event of session.log) {
    switch (event.type) {
      case 'turn/end':
        reason = (event.data as { reason: TurnEndReason }).reason;
        break;
      case 'assistant/message': {
        const data = event.data as { message: AssistantMessage; usage?: TokenUsage; interrupted?: true };
        if (data.interrupted !== true) {
          const said = messageText(data.message).trim();
          if (said !== '') text = said;
        }
        if (data.usage === undefined) break;
        addUsage(usage, data.usage);
        const prices = pricing(data.message.source.provider, data.message.source.model);
        if (prices === undefined) costKnown = false;
        else cost += costOf(data.usage, prices);
        break;
      }
      case 'tool/result': {
        const meta = nestedMeta((event.data as { meta?: unknown }).meta);
        if (meta === undefined) break;
        addUsage(usage, meta.usage);
        if (meta.costUsd === undefined) costKnown = costKnown && isZero(meta.usage);
        else cost += meta.costUsd;
        break;
      }
      default:
        break;
    }
  }
  const anyUsage = !isZero(usage);
  return { reason, text, usage, costUsd: costKnown && anyUsage ? cost : undefined };
}

function nestedMeta(meta: unknown): TaskResultMeta | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const candidate = meta as Partial<TaskResultMeta>;
  if (typeof candidate.childSessionId !== 'string' || typeof candidate.usage !== 'object') return undefined;
  return candidate as TaskResultMeta;
}

function isZero(usage: UsageTotals): boolean {
  return (
    usage.inputTokens === 0 &&
    usage.outputTokens === 0 &&
    usage.cacheReadTokens === 0 &&
    usage.cacheWriteTokens === 0
  );
}
