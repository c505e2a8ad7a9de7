import type { Message, TokenUsage } from '../../llm/index.ts';
import type { EpochHeader, Session } from '../../session/index.ts';
import { readSurface } from './surface-nodes.ts';
import type { SurfaceNode } from './surface-nodes.ts';
import { estimateEnvelopeTokens, estimateMessagesTokens } from './token-estimate.ts';

/** A measurement of what the next request will cost, and how it was obtained. */
export interface TokenMeasurement {
  /** The measured input tokens of the next request. */
  readonly tokens: number;
  /** `usage`: anchored on the provider's last reported input; `estimate`: the heuristic throughout. */
  readonly method: 'usage' | 'estimate';
}

/**
 * Measures the next request: the provider-reported input of the last successful response plus the
 * heuristic price of what the surface gained since, when the envelope is unchanged, no replacement
 * happened since and that usage is at least the heuristic price of the same prefix; otherwise the
 * heuristic price of the envelope and the whole surface. `extra` are messages about to be entered.
 */
export function measureSession(session: Session, extra: readonly Message[] = []): TokenMeasurement {
  const nodes = readSurface(session);
  const header = latestHeaderOf(session.events, session.events.length);
  const envelope = estimateEnvelopeTokens(header?.header.system, header?.header.tools);
  const pending = estimateMessagesTokens(extra);
  const estimate = envelope + sumTokens(nodes) + pending;
  const anchor = findAnchor(session);
  if (anchor === undefined) return { tokens: estimate, method: 'estimate' };
  const headerAtAnchor = latestHeaderOf(session.events, anchor.seq);
  if (headerAtAnchor === undefined || header === undefined || headerAtAnchor.json !== header.json) {
    return { tokens: estimate, method: 'estimate' };
  }
  let prefix = envelope;
  let since = 0;
  for (const node of nodes) {
    if (node.seq < anchor.seq) prefix += node.tokens;
    else since += node.tokens;
  }
  const reported = reportedInput(anchor.usage);
  if (reported < prefix) return { tokens: estimate, method: 'estimate' };
  return { tokens: reported + since + pending, method: 'usage' };
}

function sumTokens(nodes: readonly SurfaceNode[]): number {
  let total = 0;
  for (const node of nodes) total += node.tokens;
  return total;
}

function reportedInput(usage: TokenUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
}

/**
 * The last successful `assistant/message` with usage that is still on the surface, provided no
 * replacement was committed after it (a rewritten history makes its usage meaningless).
 */
function findAnchor(session: Session): { seq: number; usage: TokenUsage } | undefined {
  const events = session.events;
  for (let seq = events.length - 1; seq >= 0; seq--) {
    const event = events[seq]!;
    if (typeof event.surfaceOp === 'object') return undefined;
    if (event.type !== 'assistant/message') continue;
    const data = event.data as { usage?: TokenUsage; interrupted?: true };
    if (data.interrupted === true || data.usage === undefined) continue;
    return { seq, usage: data.usage };
  }
  return undefined;
}

function latestHeaderOf(
  events: Session['events'],
  before: number,
): { header: EpochHeader; json: string } | undefined {
  for (let seq = before - 1; seq >= 0; seq--) {
    const event = events[seq]!;
    if (event.type === 'request/header') {
      const header = (event.data as { header: EpochHeader }).header;
      return { header, json: JSON.stringify(header) };
    }
  }
  return undefined;
}
