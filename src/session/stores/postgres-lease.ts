import { hostname } from 'node:os';
import type { Pool, PoolClient } from 'pg';
import { SessionError } from '../session-error.ts';
import { SessionLockedError } from './session-lock.ts';
import type { SessionLockHolder } from './session-lock.ts';

/** Something that runs SQL: the pool or one of its clients (inside a transaction). */
export type Queryable = Pool | PoolClient;

/** A held write lease on one session: its fencing token orders every holder the session ever had. */
export interface PostgresLease {
  readonly sessionId: string;
  /** The fencing token (a bigint as text), unique across the database and increasing per acquisition. */
  readonly token: string;
  readonly holder: SessionLockHolder;
}

/** A writer whose lease another server took over: its appends are refused, nothing of them was stored. */
export class SessionFencedError extends SessionError {
  readonly sessionId: string;
  readonly token: string;
  constructor(sessionId: string, token: string, detail: string, options?: { cause?: unknown }) {
    super(
      'SESSION_FENCED',
      `session ${sessionId}: this server's write lease (fencing token ${token}) was taken over by another ` +
        `writer (${detail}); its later events were not stored. Reopen the session to continue it.`,
      options,
    );
    this.name = 'SessionFencedError';
    this.sessionId = sessionId;
    this.token = token;
  }
}

/**
 * Takes the write lease of a stored session: free, released, or expired (its holder stopped renewing)
 * leases are taken with a new fencing token, which the same statement writes into the session row under
 * its lock (where every append checks it). Throws SessionLockedError naming the live holder, and
 * SessionError `SESSION_NOT_FOUND` when the session has no row.
 */
export async function acquireLease(
  db: Queryable,
  schema: string,
  sessionId: string,
  leaseMs: number,
): Promise<PostgresLease> {
  const holder: SessionLockHolder = { pid: process.pid, host: hostname(), acquiredAt: Date.now(), token: '' };
  // The session row's lock comes first, then the lease row's: the order every lease-taking transaction
  // (create, open, delete) uses, and an append waits on the first only.
  const taken = await db.query<{ found: boolean; token: string | null }>(
    `with session as (
       select id from ${schema}.sessions where id = $1 for update
     ), taken as (
       insert into ${schema}.leases (session_id, token, holder, acquired_at, expires_at)
       select id, nextval('${schema}.fence_tokens'), $2, $3, clock_timestamp() + $4 * interval '1 millisecond'
       from session
       on conflict (session_id) do update set token = excluded.token, holder = excluded.holder,
         acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
       where ${schema}.leases.holder is null or ${schema}.leases.expires_at < clock_timestamp()
       returning token
     ), fenced as (
       update ${schema}.sessions set lease_token = taken.token from taken where ${schema}.sessions.id = $1
     )
     select exists (select 1 from session) as found, (select token::text from taken) as token`,
    [sessionId, JSON.stringify({ pid: holder.pid, host: holder.host }), holder.acquiredAt, leaseMs],
  );
  const row = taken.rows[0];
  if (row?.found !== true) throw new SessionError('SESSION_NOT_FOUND', `no session ${sessionId} to lease`);
  if (row.token === null) {
    throw new SessionLockedError(sessionId, await leaseHolderOf(db, schema, sessionId), 'it holds the lease');
  }
  return { sessionId, token: row.token, holder: { ...holder, token: row.token } };
}

/** Gives a lease back (only if it is still this one); the token stays so that later ones are larger. */
export async function releaseLease(db: Queryable, schema: string, lease: PostgresLease): Promise<void> {
  await db.query(
    `update ${schema}.leases set holder = null, expires_at = '-infinity' where session_id = $1 and token = $2`,
    [lease.sessionId, lease.token],
  );
}

/** Extends a lease; false when it is no longer this one (another writer took it over). */
export async function renewLease(
  db: Queryable,
  schema: string,
  lease: PostgresLease,
  leaseMs: number,
): Promise<boolean> {
  const result = await db.query(
    `update ${schema}.leases set expires_at = clock_timestamp() + $3 * interval '1 millisecond'
     where session_id = $1 and token = $2`,
    [lease.sessionId, lease.token, leaseMs],
  );
  return result.rowCount === 1;
}

/** The live (unexpired) holder of a session's lease, if any. */
export async function leaseHolderOf(
  db: Queryable,
  schema: string,
  sessionId: string,
): Promise<SessionLockHolder | undefined> {
  const result = await db.query<{ holder: string; token: string; acquired_at: string }>(
    `select holder, token::text as token, acquired_at::text as acquired_at from ${schema}.leases
     where session_id = $1 and holder is not null and expires_at >= clock_timestamp()`,
    [sessionId],
  );
  const row = result.rows[0];
  if (row === undefined) return undefined;
  let who: { pid?: unknown; host?: unknown } = {};
  try {
    who = JSON.parse(row.holder) as { pid?: unknown; host?: unknown };
  } catch {
    // A holder column written by hand: the lease still counts, only its description is unknown.
  }
  return {
    pid: typeof who.pid === 'number' ? who.pid : 0,
    host: typeof who.host === 'string' ? who.host : 'unknown host',
    acquiredAt: Number(row.acquired_at),
    token: row.token,
  };
}
