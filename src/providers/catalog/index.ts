export * from './cost.ts';
export * from './model-catalog.ts';
