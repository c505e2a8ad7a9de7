// The public SDK: everything a user, the CLI and the server may import.
export * from './hooks/index.ts';
export * from './llm/index.ts';
export * from './session/index.ts';
export * from './prompt/index.ts';
export * from './tools/index.ts';
export * from './agent/index.ts';
export * from './loop/index.ts';
export * from './providers/scripted/index.ts';
export * from './harness.ts';
export * from './session/stores/index.ts';
export * from './plugins/compaction/index.ts';
export * from './providers/http/index.ts';
export * from './providers/openai-compatible/index.ts';
export * from './providers/anthropic/index.ts';
export * from './providers/catalog/index.ts';
