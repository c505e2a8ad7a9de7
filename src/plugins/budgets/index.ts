export * from './budget-events.ts';
export * from './budget-meter.ts';
export * from './budgets-plugin.ts';
export * from './usage-cost.ts';
export * from './budget-record-view.ts';
