export * from './goal-events.ts';
export * from './goal-state.ts';
export * from './goals-plugin.ts';
