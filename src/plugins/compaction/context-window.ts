import type { PluginHost } from '../../agent/index.ts';
import type { Session } from '../../session/index.ts';
import type { ResolvedCompactionSettings } from './compaction-options.ts';
import { loggedContextWindow } from './session-lookups.ts';
import type { ModelRoute } from './session-lookups.ts';

/**
 * The context window of a route: configured, else what its adapter describes, else what the latest
 * `request/context` of that route recorded; undefined when nobody knows.
 */
export function contextWindowOf(
  host: PluginHost,
  session: Session,
  route: ModelRoute,
  settings: ResolvedCompactionSettings,
): number | undefined {
  if (settings.contextWindow !== undefined) return settings.contextWindow;
  try {
    const described = host.llm.prepare({ provider: route.provider, model: route.model }).model?.contextWindow;
    if (described !== undefined) return described;
  } catch {
    // The route cannot be prepared here (no adapter, or the adapter refuses it); fall back to the log.
  }
  return loggedContextWindow(session, route);
}
