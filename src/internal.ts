// Everything the CLI, the server and Rein's own tests may use: the public SDK (src/index.ts) is a curated subset
// of these barrels. Never part of the package's `exports`: users import `rein` and `rein/testing`.
export * from './hooks/index.ts';
export * from './llm/index.ts';
export * from './session/index.ts';
export * from './prompt/index.ts';
export * from './tools/index.ts';
export * from './agent/index.ts';
export * from './loop/index.ts';
export * from './providers/scripted/index.ts';
export * from './harness.ts';
export * from './providers/demo/index.ts';
export * from './app-harness.ts';
export * from './plugins/goals/index.ts';
export * from './session/stores/index.ts';
export * from './plugins/compaction/index.ts';
export * from './plugins/subagents/index.ts';
export * from './providers/http/index.ts';
export * from './providers/openai-compatible/index.ts';
export * from './providers/anthropic/index.ts';
export * from './providers/catalog/index.ts';
export * from './plugins/repetition-guard/index.ts';
export * from './tools/builtin/index.ts';
export * from './plugins/permissions/index.ts';
export * from './plugins/budgets/index.ts';
export * from './plugins/retry/index.ts';
export * from './config/index.ts';
