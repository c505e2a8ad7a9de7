// `rein/testing`: the scripted model and helpers for users' own tests.
export * from '../providers/scripted/index.ts';
export * from './log-helpers.ts';
export * from './deferred.ts';
