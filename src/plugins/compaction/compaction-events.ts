import type { TokenUsage } from '../../llm/index.ts';
import { registerSessionEventTypes } from '../../session/index.ts';

/** A surface range by its first and last node seq (inclusive, by surface position). */
export interface ShadowedRange {
  start: number;
  end: number;
}

/** Why a compaction attempt failed, as recorded by `compaction/end`. */
export interface CompactionFailureRecord {
  code: string;
  message: string;
}

/** Payload of `compaction/start`: the lock is taken; `turn` is null for a standalone manual compaction. */
export interface CompactionStartData {
  compactionId: string;
  turn: number | null;
  trigger: 'pressure' | 'overflow' | 'manual';
  sourceCommandId?: string;
}

/** Payload of `compaction/summary`: immediately followed by the replacing checkpoint `user/message`. */
export interface CompactionSummaryData {
  compactionId: string;
  summary: string;
  shadowedRange: ShadowedRange;
  shadowedSeqs: number[];
  shadowedTokenCount: number;
  summaryTokenCount: number;
  provider: string;
  model: string;
  maxTokens?: number;
  usage?: TokenUsage;
  sourceCommandId?: string;
}

/** Payload of `compaction/prune`: immediately followed by the replacing `tool/result`. */
export interface CompactionPruneData {
  compactionId: string;
  shadowedRange: ShadowedRange;
  shadowedSeqs: number[];
  shadowedTokenCount: number;
  prunedTokenCount: number;
  removedChars: number;
}

/** Payload of `compaction/end`: the lock is released; `error` marks a failed attempt. */
export interface CompactionEndData {
  compactionId: string;
  turn: number | null;
  error?: CompactionFailureRecord;
  sourceCommandId?: string;
}

declare module '../../session/session-event.ts' {
  interface SessionEventMap {
    'compaction/start': CompactionStartData;
    'compaction/summary': CompactionSummaryData;
    'compaction/prune': CompactionPruneData;
    'compaction/end': CompactionEndData;
  }
}

/** The durable event types the compaction plugin owns. */
export const compactionEventTypes = [
  'compaction/start',
  'compaction/summary',
  'compaction/prune',
  'compaction/end',
] as const;

registerSessionEventTypes(compactionEventTypes);
