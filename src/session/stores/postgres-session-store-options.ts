import type { Pool } from 'pg';
import { SessionError } from '../session-error.ts';
import type { PricingLookup } from '../session-store.ts';
import { ensurePostgresSchema } from './postgres-schema.ts';
import type { PostgresSchemaState } from './postgres-schema.ts';
import { parsePostgresUrl } from './postgres-url.ts';
import type { SessionDurability } from './session-file-writer.ts';

/** Options of `PostgresSessionStore.connect`. */
export interface PostgresSessionStoreOptions {
  /** `postgres://user:password@host:port/database[?schema=rein&lease_ms=30000]`. */
  url: string;
  /** The schema that holds Rein's tables; `rein` (or the URL's `schema` parameter) by default. */
  schema?: string;
  /** How long a write lease lasts without renewal (renewed every third of it); 30 s by default. */
  leaseMs?: number;
  /** How long appended events may wait in memory before a background commit; 100 ms by default. */
  batchWindowMs?: number;
  /** What survives what, as on disk (`SessionDurability`): `power-loss` (the default) or `process-crash`. */
  durability?: SessionDurability;
  /** How long a lost connection is retried before a checkpoint fails; 15 s by default. */
  retryMs?: number;
  /**
   * The least time between two NOTIFYs (which wake followers on other servers) of a session's commits
   * that are not synced; synced commits (flushes, releases, and under `power-loss` turn ends and those
   * before writing tool bodies) always notify, and a skipped one is sent late, at the end of the
   * interval. 0 notifies every commit; 50 ms by default.
   */
  notifyIntervalMs?: number;
  /** Connections in the pool; 10 by default. */
  poolSize?: number;
  /** Prices models for the `cost` of session listings. */
  pricing?: PricingLookup;
  /** Called after each commit that waited for the WAL flush with the number of durable events. */
  onDurable?: (sessionId: string, eventCount: number) => void;
}

/** What `connectPostgresPool` opened: the pool, its schema created or migrated, and the settings it used. */
export interface ConnectedPostgresPool {
  pool: Pool;
  /** The database, for messages: the URL without its password. */
  where: string;
  schema: string;
  leaseMs: number;
  /** What the schema check found. */
  state: PostgresSchemaState;
}

/**
 * Checks the options, opens the pool and creates or migrates the schema, failing as
 * `PostgresSessionStore.connect` documents; a failure after the pool opened ends it.
 */
export async function connectPostgresPool(
  options: PostgresSessionStoreOptions,
): Promise<ConnectedPostgresPool> {
  const parsed = parsePostgresUrl(options.url);
  const schema = options.schema ?? parsed.schema;
  const leaseMs = options.leaseMs ?? parsed.leaseMs ?? 30_000;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 100) {
    throw new SessionError(
      'STORE_URL',
      `the lease must be a whole number of milliseconds ≥ 100, not ${leaseMs}`,
    );
  }
  const notifyMs = options.notifyIntervalMs;
  if (notifyMs !== undefined && (!Number.isSafeInteger(notifyMs) || notifyMs < 0)) {
    throw new SessionError(
      'STORE_URL',
      `the notify interval must be a whole number of milliseconds ≥ 0, not ${notifyMs}`,
    );
  }
  // pg (and the fetch stack it probes at load) costs tens of milliseconds: only a PostgreSQL store loads it.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: parsed.connectionString,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
    // A new connection costs the server an authentication and, at its first append, the plans,
    // function compilation and catalog caches (measured: ~10 ms of server CPU, 30–40 µs a step of a
    // 300-step turn against 4–10 when warm), so idle connections stay open between sessions and turns
    // a person paces minutes apart, instead of the driver's 10 s; they never hold the process open.
    idleTimeoutMillis: 5 * 60_000,
    allowExitOnIdle: true,
    application_name: 'rein',
  });
  pool.on('error', () => {
    // An idle connection broke (the server restarted): the pool drops it and the next query reconnects.
  });
  try {
    const state = await ensurePostgresSchema(pool, schema, parsed.where);
    return { pool, where: parsed.where, schema, leaseMs, state };
  } catch (error) {
    await pool.end().catch(() => {
      // The connection never worked; the schema or connection error is what the caller needs.
    });
    throw error;
  }
}
