export * from './agent.ts';
export * from './agent-events.ts';
export * from './agent-registry.ts';
export * from './inbox.ts';
export * from './agent-services.ts';
export * from './harness-plugin.ts';
