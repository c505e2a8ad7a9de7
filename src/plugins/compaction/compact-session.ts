import type { Agent, PluginHost } from '../../agent/index.ts';
import type { CompactionOptions } from './compaction-options.ts';
import { budgetFor, resolveSettings, validateCompactionOptions } from './compaction-options.ts';
import { compactionOptionsOf } from './compaction-plugin.ts';
import { CompactionError } from './compaction-error.ts';
import { compactRange, worthSummarizing } from './compaction-transaction.ts';
import { contextWindowOf } from './context-window.ts';
import { selectRange } from './range-selection.ts';
import { conversationRoute } from './session-lookups.ts';
import type { ModelRoute } from './session-lookups.ts';
import { readSurface } from './surface-nodes.ts';

/** Options of one manual compaction. */
export interface CompactSessionOptions {
  /** Settings for this run; those of the attached compaction plugin (or the defaults) when omitted. */
  settings?: CompactionOptions;
  /** The id of the user command (e.g. a UI request) that asked for it, recorded on the compaction events. */
  commandId?: string;
  /** The route that writes the summary for this run (e.g. a `--model` the user named). */
  summarizer?: ModelRoute;
}

/** What a manual compaction did. */
export type CompactSessionResult =
  | {
      compacted: true;
      compactionId: string;
      shadowedTokenCount: number;
      summaryTokenCount: number;
    }
  | { compacted: false; reason: 'nothing-to-compact' };

/**
 * Manual compaction (`/compact`): runs as the agent's maintenance task (so only while idle, and queued
 * prompts wait behind it), summarizes the oldest surface range that leaves the retained tail inside a
 * standalone `compaction/start { turn: null }` … `compaction/end` bracket, and makes the log durable
 * before latched prompts run. Rejects with `AGENT_BUSY` when the agent is not idle; a failed attempt
 * rejects after recording `compaction/end { error }`.
 */
export function compactSession(
  host: PluginHost,
  agent: Agent,
  options: CompactSessionOptions = {},
): Promise<CompactSessionResult> {
  try {
    return agent.runMaintenance((signal) => compactDuringMaintenance(host, agent, signal, options));
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * The body of manual compaction for a caller that already holds the agent's maintenance slot (its
 * own `agent.runMaintenance` task, whose signal it passes); `compactSession` is this inside one.
 */
export async function compactDuringMaintenance(
  host: PluginHost,
  agent: Agent,
  signal: AbortSignal,
  options: CompactSessionOptions = {},
): Promise<CompactSessionResult> {
  const configured = options.settings ?? compactionOptionsOf(host) ?? {};
  validateCompactionOptions(configured);
  const session = agent.session;
  try {
    const route = conversationRoute(session, agent.options);
    if (route === undefined) {
      throw new CompactionError('NO_ROUTE', 'the agent has no model route to write a summary with');
    }
    const resolved = resolveSettings(configured, route);
    const settings =
      options.summarizer !== undefined ? { ...resolved, summarizer: { ...options.summarizer } } : resolved;
    const contextWindow = contextWindowOf(host, session, route, settings);
    // Without a known window only an absolute retention can be honoured; otherwise keep the newest node.
    const retainTokens =
      contextWindow !== undefined
        ? budgetFor(settings, contextWindow).retainTokens
        : settings.retain.kind === 'tokens'
          ? settings.retain.tokens
          : 0;
    const range = selectRange(readSurface(session), retainTokens);
    if (range === undefined || !worthSummarizing(range)) {
      return { compacted: false, reason: 'nothing-to-compact' };
    }
    const result = await compactRange(
      { host, agent, settings, trigger: 'manual', signal, sourceCommandId: options.commandId },
      range,
    );
    return {
      compacted: true,
      compactionId: result.compactionId,
      shadowedTokenCount: result.shadowedTokenCount,
      summaryTokenCount: result.summaryTokenCount,
    };
  } finally {
    // Durable before any latched prompt runs on the compacted history.
    await session.checkpoint('flush');
  }
}
