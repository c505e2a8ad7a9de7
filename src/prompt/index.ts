export * from './system-prompt.ts';
