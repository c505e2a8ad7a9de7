export * from './disk-session-store.ts';
export { SessionLockedError } from './session-lock.ts';
export type { SessionLockHolder } from './session-lock.ts';
export { SessionCorruptError, sessionLogVersion } from './session-log-format.ts';
export type { SessionDurability } from './session-file-writer.ts';
