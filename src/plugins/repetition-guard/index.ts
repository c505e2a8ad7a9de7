export * from './call-fingerprint.ts';
export * from './guard-events.ts';
export * from './repetition-guard-plugin.ts';
