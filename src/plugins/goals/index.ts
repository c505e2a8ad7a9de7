export * from './goal-events.ts';
export * from './goal-state.ts';
export * from './goals-plugin.ts';
export * from './goal-record-view.ts';
