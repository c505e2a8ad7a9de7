import type { LlmCallConfig } from '../../llm/index.ts';
import type { EpochHeader, Session } from '../../session/index.ts';

/** A provider/model pair. */
export interface ModelRoute {
  provider: string;
  model: string;
}

/** The latest logged request envelope, if any. */
export function latestRequestHeader(session: Session): EpochHeader | undefined {
  const events = session.events;
  for (let seq = events.length - 1; seq >= 0; seq--) {
    const event = events[seq]!;
    if (event.type === 'request/header') return (event.data as { header: EpochHeader }).header;
  }
  return undefined;
}

/** The capacity the latest `request/context` of this route recorded, if it recorded one. */
export function loggedContextWindow(session: Session, route: ModelRoute): number | undefined {
  const events = session.events;
  for (let seq = events.length - 1; seq >= 0; seq--) {
    const event = events[seq]!;
    if (event.type !== 'request/context') continue;
    const data = event.data as { provider: string; model: string; contextWindow?: number };
    if (data.provider === route.provider && data.model === route.model) return data.contextWindow;
  }
  return undefined;
}

/** The route of the conversation: the latest logged header's, else the given fallback (the agent's options). */
export function conversationRoute(
  session: Session,
  fallback: Partial<LlmCallConfig>,
): ModelRoute | undefined {
  const config = latestRequestHeader(session)?.config;
  if (config !== undefined && config.provider !== '' && config.model !== '') {
    return { provider: config.provider, model: config.model };
  }
  if (
    typeof fallback.provider === 'string' &&
    fallback.provider !== '' &&
    typeof fallback.model === 'string' &&
    fallback.model !== ''
  ) {
    return { provider: fallback.provider, model: fallback.model };
  }
  return undefined;
}

/**
 * The id of a `compaction/start` that has no `compaction/end` and is not older than the latest
 * `session/end-seed` — the log-recorded compaction lock — or undefined when the lock is free.
 */
export function openCompactionId(session: Session): string | undefined {
  const events = session.events;
  // Compactions never overlap (this lock), so the latest compaction record decides.
  for (let seq = events.length - 1; seq >= 0; seq--) {
    const event = events[seq]!;
    if (event.type === 'session/end-seed' || event.type === 'compaction/end') return undefined;
    if (event.type === 'compaction/start') return (event.data as { compactionId: string }).compactionId;
  }
  return undefined;
}
