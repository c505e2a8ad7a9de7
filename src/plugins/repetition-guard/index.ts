export * from './call-fingerprint.ts';
export * from './guard-events.ts';
export * from './repetition-guard-plugin.ts';
export * from './guard-record-view.ts';
