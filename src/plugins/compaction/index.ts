// The compaction plugin's public surface; helpers with generic names stay internal to avoid barrel clashes.
export * from './compaction-events.ts';
export * from './compaction-error.ts';
export * from './compaction-options.ts';
export * from './compaction-plugin.ts';
export * from './compact-session.ts';
export type { CompactionContext, CompactionResult } from './compaction-transaction.ts';
export type { CompactionRange } from './range-selection.ts';
export type { TokenMeasurement } from './token-meter.ts';
export { measureSession } from './token-meter.ts';
export {
  estimateBlockTokens,
  estimateEnvelopeTokens,
  estimateMessageTokens,
  estimateMessagesTokens,
} from './token-estimate.ts';
