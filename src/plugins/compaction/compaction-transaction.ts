import { randomUUID } from 'node:crypto';
import type { Agent, PluginHost } from '../../agent/index.ts';
import type { UserMessage } from '../../llm/index.ts';
import { createUserMessage, toFailure } from '../../llm/index.ts';
import type { SessionEventMap } from '../../session/index.ts';
import type { CompactionFailureRecord, CompactionStartData } from './compaction-events.ts';
import { CompactionError } from './compaction-error.ts';
import type { PruneSettings, ResolvedCompactionSettings } from './compaction-options.ts';
import type { CompactionRange } from './range-selection.ts';
import { conversationRoute, latestRequestHeader, openCompactionId } from './session-lookups.ts';
import { isPairingBalanced, readSurface } from './surface-nodes.ts';
import { frameSummary, summarize } from './summarizer.ts';
import { estimateMessageTokens } from './token-estimate.ts';
import { pruneCandidates } from './tool-result-pruner.ts';

/** Who asked for a compaction and under which settings. */
export interface CompactionContext {
  readonly host: PluginHost;
  readonly agent: Agent;
  readonly settings: ResolvedCompactionSettings;
  readonly trigger: CompactionStartData['trigger'];
  readonly signal: AbortSignal;
  readonly sourceCommandId?: string | undefined;
}

/** A committed summary. */
export interface CompactionResult {
  readonly compactionId: string;
  readonly shadowedSeqs: readonly number[];
  readonly shadowedTokenCount: number;
  readonly summaryTokenCount: number;
  /** The seq of the checkpoint `user/message`. */
  readonly checkpointSeq: number;
}

/**
 * Prunes every oversized tool result on the surface inside one `compaction/start` … `compaction/end`
 * bracket: a `compaction/prune` record, then the replacing `tool/result`, per result. Needs an open
 * turn; returns how many results were pruned (0 writes nothing).
 */
export function pruneToolResults(context: CompactionContext, pruning: PruneSettings): number {
  const session = context.agent.session;
  const turn = session.openTurn;
  if (turn === undefined || openCompactionId(session) !== undefined) return 0;
  const candidates = pruneCandidates(readSurface(session), pruning);
  if (candidates.length === 0) return 0;
  const compactionId = randomUUID();
  session.append('compaction/start', startData(context, compactionId, turn));
  try {
    for (const candidate of candidates) {
      const { node, replacement } = candidate;
      session.append('compaction/prune', {
        compactionId,
        shadowedRange: { start: node.seq, end: node.seq },
        shadowedSeqs: [node.seq],
        shadowedTokenCount: node.tokens,
        prunedTokenCount: estimateMessageTokens(replacement),
        removedChars: candidate.removedChars,
      });
      const original = node.event.data as SessionEventMap['tool/result'];
      session.append(
        'tool/result',
        { ...original, message: replacement },
        { surfaceOp: { op: 'replace', start: node.seq, end: node.seq }, sourceEventSeqs: [node.seq] },
      );
    }
  } catch (error) {
    endWithError(context, compactionId, turn, error);
    throw error;
  }
  session.append('compaction/end', endData(context, compactionId, turn));
  return candidates.length;
}

/**
 * Summarizes a head-anchored surface range and commits it as a replacing checkpoint `user/message`
 * between `compaction/start` and `compaction/end`. Any failure after the start is recorded as
 * `compaction/end { error }`, leaves the surface untouched, and is rethrown.
 */
export async function compactRange(
  context: CompactionContext,
  range: CompactionRange,
): Promise<CompactionResult> {
  const { agent, settings, host } = context;
  const session = agent.session;
  const manual = context.trigger === 'manual';
  const turn = manual ? null : (session.openTurn ?? null);
  if (manual ? session.openTurn !== undefined : turn === null) {
    throw new CompactionError(
      'WRONG_PHASE',
      manual
        ? 'manual compaction needs an idle agent with no open turn'
        : 'automatic compaction runs inside a turn',
    );
  }
  const locked = openCompactionId(session);
  if (locked !== undefined)
    throw new CompactionError('COMPACTION_LOCKED', `compaction ${locked} is still open`);
  const shadowedSeqs = range.nodes.map((node) => node.seq);
  if (!isContiguousOnSurface(session.surfaceNodes, shadowedSeqs) || !isPairingBalanced(range.nodes)) {
    throw new CompactionError(
      'INVALID_RANGE',
      'the range is not a contiguous, call/result-balanced surface span',
    );
  }
  const route = settings.summarizer ?? conversationRoute(session, agent.options);
  if (route === undefined) throw new CompactionError('NO_ROUTE', 'no model route to write the summary with');
  const surfaceBefore = session.surfaceNodes.slice();
  const compactionId = randomUUID();
  const start = session.append('compaction/start', startData(context, compactionId, turn));
  try {
    const header = latestRequestHeader(session);
    const summary = await summarize(host.llm, {
      target: route,
      system: header?.system,
      tools: header?.tools,
      messages: range.nodes.flatMap((node) => (node.message !== undefined ? [node.message] : [])),
      maxTokens: settings.maxTokens,
      sessionId: session.id,
      scope: agent.id,
      signal: context.signal,
    });
    const checkpoint: UserMessage = createUserMessage(frameSummary(summary.text), {
      kind: 'plugin',
      plugin: 'compaction',
      compactionId,
    });
    const summaryTokenCount = estimateMessageTokens(checkpoint);
    if (summaryTokenCount >= range.tokens) {
      throw new CompactionError(
        'SUMMARY_NOT_SMALLER',
        `the summary (${summaryTokenCount} tokens) is not smaller than what it would replace (${range.tokens} tokens)`,
      );
    }
    const stable = manual
      ? isContiguousOnSurface(session.surfaceNodes, shadowedSeqs)
      : sameNodes(session.surfaceNodes, surfaceBefore);
    if (!stable)
      throw new CompactionError('SURFACE_CHANGED', 'the surface changed while the summary was written');
    const summaryEvent = session.append('compaction/summary', {
      compactionId,
      summary: summary.text,
      shadowedRange: { start: shadowedSeqs[0]!, end: shadowedSeqs[shadowedSeqs.length - 1]! },
      shadowedSeqs,
      shadowedTokenCount: range.tokens,
      summaryTokenCount,
      provider: summary.provider,
      model: summary.model,
      maxTokens: summary.maxTokens,
      ...(summary.usage !== undefined ? { usage: summary.usage } : {}),
      ...(context.sourceCommandId !== undefined ? { sourceCommandId: context.sourceCommandId } : {}),
    });
    const committed = session.append('user/message', checkpoint, {
      surfaceOp: { op: 'replace', start: shadowedSeqs[0]!, end: shadowedSeqs[shadowedSeqs.length - 1]! },
      sourceEventSeqs: [start.seq, summaryEvent.seq, ...shadowedSeqs],
    });
    session.append('compaction/end', endData(context, compactionId, turn));
    return {
      compactionId,
      shadowedSeqs,
      shadowedTokenCount: range.tokens,
      summaryTokenCount,
      checkpointSeq: committed.seq,
    };
  } catch (error) {
    endWithError(context, compactionId, turn, error);
    throw error;
  }
}

// The price of an empty framed checkpoint plus a minimal summary: ranges at or below it cannot shrink.
const summaryFloorTokens =
  estimateMessageTokens({ content: [{ type: 'text', text: frameSummary('') }] }) + 16;

/** True when summarizing the range could possibly produce something smaller than the range itself. */
export function worthSummarizing(range: CompactionRange): boolean {
  return range.tokens > summaryFloorTokens;
}

function startData(
  context: CompactionContext,
  compactionId: string,
  turn: number | null,
): CompactionStartData {
  return {
    compactionId,
    turn,
    trigger: context.trigger,
    ...(context.sourceCommandId !== undefined ? { sourceCommandId: context.sourceCommandId } : {}),
  };
}

function endData(
  context: CompactionContext,
  compactionId: string,
  turn: number | null,
  error?: CompactionFailureRecord,
): { compactionId: string; turn: number | null; error?: CompactionFailureRecord; sourceCommandId?: string } {
  return {
    compactionId,
    turn,
    ...(error !== undefined ? { error } : {}),
    ...(context.sourceCommandId !== undefined ? { sourceCommandId: context.sourceCommandId } : {}),
  };
}

function endWithError(
  context: CompactionContext,
  compactionId: string,
  turn: number | null,
  error: unknown,
): void {
  const session = context.agent.session;
  if (openCompactionId(session) !== compactionId) return;
  const failure = context.signal.aborted
    ? { code: 'ABORTED', message: 'compaction aborted' }
    : toFailure(error);
  try {
    session.append(
      'compaction/end',
      endData(context, compactionId, turn, { code: failure.code, message: failure.message }),
    );
  } catch {
    // The log refused the record (a closed session); the original failure is what the caller must see.
  }
}

function isContiguousOnSurface(surface: readonly number[], seqs: readonly number[]): boolean {
  if (seqs.length === 0) return false;
  const first = surface.indexOf(seqs[0]!);
  if (first < 0 || first + seqs.length > surface.length) return false;
  return seqs.every((seq, offset) => surface[first + offset] === seq);
}

function sameNodes(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((seq, index) => seq === b[index]);
}
