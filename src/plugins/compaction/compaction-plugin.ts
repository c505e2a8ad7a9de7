import type {
  Agent,
  AgentRequestErrorPayload,
  HarnessPlugin,
  PluginHost,
  RequestErrorDecision,
} from '../../agent/index.ts';
import type { UserMessage } from '../../llm/index.ts';
import { toFailure } from '../../llm/index.ts';
import type {
  CompactionOptions,
  CompactionWarning,
  ResolvedCompactionSettings,
} from './compaction-options.ts';
import { budgetFor, resolveSettings, validateCompactionOptions } from './compaction-options.ts';
import type { CompactionContext } from './compaction-transaction.ts';
import { compactRange, pruneToolResults, worthSummarizing } from './compaction-transaction.ts';
import { contextWindowOf } from './context-window.ts';
import { selectRange } from './range-selection.ts';
import { conversationRoute, openCompactionId } from './session-lookups.ts';
import type { ModelRoute } from './session-lookups.ts';
import { readSurface } from './surface-nodes.ts';
import { measureSession } from './token-meter.ts';

// The options each host's plugin was set up with, so that manual compaction uses the same settings.
const optionsByHost = new WeakMap<PluginHost, CompactionOptions>();

/** The options the compaction plugin attached to this host was created with, if one is attached. */
export function compactionOptionsOf(host: PluginHost): CompactionOptions | undefined {
  return optionsByHost.get(host);
}

/**
 * The compaction plugin: measures context pressure at every `agent/pre-step` (before delegating) and
 * recovers `CONTEXT_WINDOW_EXCEEDED` at `agent/request-error` — pruning oversized tool results first,
 * then summarizing the oldest surface range — and asks for a retry only when the surface replacement
 * generation advanced, so a failure compaction cannot relieve stands.
 */
export function compactionPlugin(options: CompactionOptions = {}): HarnessPlugin {
  validateCompactionOptions(options);
  const warn =
    options.onWarning ??
    ((warning: CompactionWarning): void => {
      console.warn(`[rein] compaction (${warning.code}): ${warning.message}`);
    });
  return {
    name: 'compaction',
    setup(host) {
      optionsByHost.set(host, options);
      // Overflow recoveries of the current failure chain, per agent id.
      const recoveries = new Map<string, number>();
      const warnedRoutes = new Set<string>();
      const warnOncePerRoute = (agent: Agent, route: ModelRoute, code: string, message: string): void => {
        const key = `${route.provider}\u0000${route.model}\u0000${code}`;
        if (warnedRoutes.has(key)) return;
        warnedRoutes.add(key);
        warn({ code, message, agentId: agent.id, provider: route.provider, model: route.model });
      };
      const disposers = [
        host.hooks.on('agent/pre-step', async (payload, next) => {
          if (!payload.signal.aborted) {
            try {
              await relievePressure(
                host,
                payload.agent,
                payload.messages,
                payload.signal,
                options,
                warn,
                warnOncePerRoute,
              );
            } catch (error) {
              if (!payload.signal.aborted) {
                const failure = toFailure(error);
                warn({ code: failure.code, message: failure.message, agentId: payload.agent.id });
              }
            }
          }
          return next();
        }),
        host.hooks.on('agent/request-error', async (payload, next) => {
          const answer = await recoverOverflow(host, payload, options, recoveries, warn);
          return answer ?? next();
        }),
        host.hooks.on('agent/status', ({ agent, status }) => {
          if (status === 'idle') recoveries.delete(agent.id);
        }),
        host.hooks.on('session/event', ({ session, event }) => {
          if (event.type === 'assistant/message') recoveries.delete(session.id);
        }),
        host.hooks.on('agent/disposed', ({ agent }) => {
          recoveries.delete(agent.id);
        }),
      ];
      return () => {
        for (const dispose of disposers) dispose();
        if (optionsByHost.get(host) === options) optionsByHost.delete(host);
      };
    },
  };
}

/** The pressure trigger: compacts until the next request measures below the threshold, or gives up. */
async function relievePressure(
  host: PluginHost,
  agent: Agent,
  entering: readonly UserMessage[],
  signal: AbortSignal,
  options: CompactionOptions,
  warn: (warning: CompactionWarning) => void,
  warnOncePerRoute: (agent: Agent, route: ModelRoute, code: string, message: string) => void,
): Promise<void> {
  const session = agent.session;
  const route = conversationRoute(session, agent.options);
  if (route === undefined) return;
  const settings = resolveSettings(options, route);
  if (!settings.auto) return;
  const contextWindow = contextWindowOf(host, session, route, settings);
  if (contextWindow === undefined) {
    warnOncePerRoute(
      agent,
      route,
      'NO_CONTEXT_WINDOW',
      `the context window of ${route.provider}/${route.model} is unknown; set contextWindow in the compaction options`,
    );
    return;
  }
  let budget: ReturnType<typeof budgetFor>;
  try {
    budget = budgetFor(settings, contextWindow);
  } catch (error) {
    warnOncePerRoute(agent, route, 'INVALID_COMPACTION_OPTIONS', toFailure(error).message);
    return;
  }
  if (openCompactionId(session) !== undefined) return;
  const over = (): boolean => measureSession(session, entering).tokens >= budget.thresholdTokens;
  if (!over()) return;
  const context: CompactionContext = { host, agent, settings, trigger: 'pressure', signal };
  if (settings.pruning !== undefined && pruneToolResults(context, settings.pruning) > 0 && !over()) return;
  for (let attempt = 0; attempt <= settings.compactionRetries; attempt++) {
    if (signal.aborted) return;
    const range = selectRange(readSurface(session), budget.retainTokens);
    if (range === undefined || !worthSummarizing(range)) break;
    await compactRange(context, range);
    if (!over()) return;
  }
  const measured = measureSession(session, entering).tokens;
  warn({
    code: 'STILL_OVER_THRESHOLD',
    message: `the next request measures ${measured} tokens, above the ${budget.thresholdTokens}-token threshold, and nothing more can be compacted`,
    agentId: agent.id,
    provider: route.provider,
    model: route.model,
  });
}

/** The overflow trigger: answers retry only when pruning or summarizing replaced part of the surface. */
async function recoverOverflow(
  host: PluginHost,
  payload: AgentRequestErrorPayload,
  options: CompactionOptions,
  recoveries: Map<string, number>,
  warn: (warning: CompactionWarning) => void,
): Promise<RequestErrorDecision> {
  const { agent, signal } = payload;
  if (payload.failure.code !== 'CONTEXT_WINDOW_EXCEEDED' || signal.aborted) return undefined;
  const session = agent.session;
  const settings: ResolvedCompactionSettings = resolveSettings(options, {
    provider: payload.provider,
    model: payload.model,
  });
  if (!settings.auto) return undefined;
  const used = recoveries.get(agent.id) ?? 0;
  if (used >= settings.maxOverflowRetries) return undefined;
  if (openCompactionId(session) !== undefined) return undefined;
  const generation = session.replaceGeneration;
  const context: CompactionContext = { host, agent, settings, trigger: 'overflow', signal };
  try {
    if (settings.pruning !== undefined) pruneToolResults(context, settings.pruning);
    // Retention 0: everything but the newest node may go, whatever the threshold says.
    const range = selectRange(readSurface(session), 0);
    if (range !== undefined && worthSummarizing(range) && !signal.aborted) await compactRange(context, range);
  } catch (error) {
    if (!signal.aborted) {
      const failure = toFailure(error);
      warn({
        code: failure.code,
        message: `overflow recovery failed: ${failure.message}`,
        agentId: agent.id,
        provider: payload.provider,
        model: payload.model,
      });
    }
  }
  if (session.replaceGeneration <= generation || signal.aborted) return undefined;
  recoveries.set(agent.id, used + 1);
  return { kind: 'retry' };
}
