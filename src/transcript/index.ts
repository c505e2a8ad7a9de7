export * from './transcript.ts';
export * from './transcript-item.ts';
export type { TranscriptPricing } from './transcript-parts.ts';
