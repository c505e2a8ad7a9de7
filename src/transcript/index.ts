export * from './transcript.ts';
export * from './transcript-item.ts';
