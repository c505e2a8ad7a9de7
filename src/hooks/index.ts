export * from './hook-bus.ts';
export * from './hook-event-map.ts';
