import type { DurableEvent } from '../session/index.ts';
import type { CompactionItem } from './transcript-item.ts';

/** A running compaction's item, as its `compaction/start` (or its first record, in a cut log) shows it. */
export function compactionItem(
  seq: number,
  compactionId: string,
  trigger: CompactionItem['trigger'],
): CompactionItem {
  return { kind: 'compaction', key: `m${seq}`, seq, compactionId, trigger, state: 'running' };
}

/** What a compaction's summary, prune or end record adds to its item (in place). */
export function recordCompaction(
  item: CompactionItem,
  event: DurableEvent & { type: 'compaction/summary' | 'compaction/prune' | 'compaction/end' },
): void {
  switch (event.type) {
    case 'compaction/summary':
      item.summary = {
        shadowedTokens: event.data.shadowedTokenCount,
        summaryTokens: event.data.summaryTokenCount,
      };
      break;
    case 'compaction/prune': {
      const before = item.prune ?? { results: 0, shadowedTokens: 0, prunedTokens: 0 };
      item.prune = {
        results: before.results + 1,
        shadowedTokens: before.shadowedTokens + event.data.shadowedTokenCount,
        prunedTokens: before.prunedTokens + event.data.prunedTokenCount,
      };
      break;
    }
    case 'compaction/end':
      item.state = event.data.error !== undefined ? 'failed' : 'done';
      if (event.data.error !== undefined)
        item.error = { code: event.data.error.code, message: event.data.error.message };
      break;
  }
}
