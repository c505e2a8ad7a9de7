export * from './transcript.ts';
export type { TranscriptCost } from './turn-usage-ledger.ts';
export * from './transcript-item.ts';
export type { TranscriptPricing } from './transcript-parts.ts';
export { StreamedDeltaTexts, streamedDelta, streamedDeltaKey } from './streamed-delta.ts';
export type { TranscriptCarry } from './transcript-carry.ts';
export { TranscriptPageError } from './transcript-carry.ts';
export {
  restoredTranscriptCarries,
  saveTranscriptCarries,
  transcriptCarriesScan,
} from './transcript-carries.ts';
export type { ModelUsageSum, UsageCarry } from './turn-usage-ledger.ts';
