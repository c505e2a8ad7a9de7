// `rein/testing`: the scripted model and helpers for users' own tests.
export { ScriptedProvider } from '../providers/scripted/index.ts';
export type {
  ScriptedProviderOptions,
  ScriptedResponse,
  ScriptedToolCall,
  ScriptedTurn,
} from '../providers/scripted/index.ts';
export * from './log-helpers.ts';
export * from './deferred.ts';
