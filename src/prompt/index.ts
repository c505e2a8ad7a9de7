export * from './system-prompt.ts';
export * from './agents-md.ts';
