import type { PricingLookup, SessionStore } from '../session-store.ts';
import { SessionError } from '../session-error.ts';
import { DiskSessionStore } from './disk-session-store.ts';
import { PostgresSessionStore } from './postgres-session-store.ts';
import { isPostgresUrl } from './postgres-url.ts';

/** Options of `openSessionStore`. */
export interface OpenSessionStoreOptions {
  /** The disk store's directory, used for `disk` (or no selection). */
  sessionsDirectory: string;
  pricing?: PricingLookup;
}

/**
 * Opens the session store a selection names: nothing or `disk` is the disk store under
 * `sessionsDirectory`, a `postgres://` (or `postgresql://`) URL the PostgreSQL store (connected and its
 * schema checked). Anything else is refused with SessionError `STORE_URL`.
 */
export async function openSessionStore(
  selection: string | undefined,
  options: OpenSessionStoreOptions,
): Promise<SessionStore> {
  const text = selection?.trim() ?? '';
  const pricing = options.pricing !== undefined ? { pricing: options.pricing } : {};
  if (text === '' || text === 'disk')
    return new DiskSessionStore({ root: options.sessionsDirectory, ...pricing });
  if (isPostgresUrl(text)) return PostgresSessionStore.connect({ url: text, ...pricing });
  throw new SessionError(
    'STORE_URL',
    `unknown session store ${JSON.stringify(text.replace(/\/\/[^@/]*@/, '//…@'))}: use disk or a postgres://user:password@host:port/database URL`,
  );
}
