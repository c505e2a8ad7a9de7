export * from './child-outcome.ts';
export * from './subagents-plugin.ts';
