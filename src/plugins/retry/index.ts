export * from './retry-events.ts';
export * from './retry-plugin.ts';
