import type { Message, TokenUsage } from '../../llm/index.ts';
import type { Session } from '../../session/index.ts';
import { requestHeaderBefore } from './session-lookups.ts';
import { readSurface, surfaceTokens } from './surface-nodes.ts';
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
  const surface = surfaceTokens(session);
  const header = requestHeaderBefore(session, session.length);
  const envelope = estimateEnvelopeTokens(header?.header.system, header?.header.tools);
  const pending = estimateMessagesTokens(extra);
  const estimate = envelope + surface + pending;
  const anchor = findAnchor(session);
  if (anchor === undefined) return { tokens: estimate, method: 'estimate' };
  const headerAtAnchor = requestHeaderBefore(session, anchor.seq);
  if (headerAtAnchor === undefined || header === undefined || headerAtAnchor.json !== header.json) {
    return { tokens: estimate, method: 'estimate' };
  }
  // No replacement happened since the anchor, so the nodes from it on are the surface's appended tail.
  let since = 0;
  for (let position = nodes.length - 1; position >= 0 && nodes[position]!.seq >= anchor.seq; position--) {
    since += nodes[position]!.tokens;
  }
  const prefix = envelope + surface - since;
  const reported = reportedInput(anchor.usage);
  if (reported < prefix) return { tokens: estimate, method: 'estimate' };
  return { tokens: reported + since + pending, method: 'usage' };
}

function reportedInput(usage: TokenUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
}

/**
 * The last successful `assistant/message` with usage that is still on the surface, provided no
 * replacement was committed after it (a rewritten history makes its usage meaningless).
 */
function findAnchor(session: Session): { seq: number; usage: TokenUsage } | undefined {
  const log = session.log;
  for (let seq = log.length - 1; seq >= 0; seq--) {
    // Chunk events carry no surface operation and no usage.
    if (log.typeAt(seq) === 'assistant/chunk') continue;
    const event = log.at(seq)!;
    if (typeof event.surfaceOp === 'object') return undefined;
    if (event.type !== 'assistant/message') continue;
    const data = event.data as { usage?: TokenUsage; interrupted?: true };
    if (data.interrupted === true || data.usage === undefined) continue;
    return { seq, usage: data.usage };
  }
  return undefined;
}
