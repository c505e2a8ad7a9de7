import type { SessionStore } from '../internal.ts';
import { PostgresSessionStore, postgresSchemaVersion } from '../internal.ts';
import type { DoctorCheck } from './doctor-command.ts';

const fixes: Readonly<Record<string, string>> = {
  STORE_URL: 'set REIN_STORE (or --store) to disk or postgres://user:password@host:port/database',
  STORE_UNREACHABLE: 'check the host, port and database name in REIN_STORE, and that PostgreSQL is running',
  STORE_AUTH: 'check the user and password in REIN_STORE (and pg_hba.conf on the server)',
  STORE_FOREIGN: "point REIN_STORE at a database (or ?schema=<name>) that is Rein's or empty",
  STORE_READ_ONLY: 'point REIN_STORE at the primary server, not a read-only replica',
  SESSION_VERSION: 'upgrade Rein: a newer Rein migrated this database',
};

/** The check for a store that could not be opened at all, when the failure is the store's; else undefined. */
export function storeOpenCheck(error: unknown): DoctorCheck | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || fixes[code] === undefined) return undefined;
  return { name: 'store', status: 'fail', detail: `${code}: ${(error as Error).message}`, fix: fixes[code] };
}

/** The PostgreSQL store's own checks: the connection, the schema version and the lease table. */
export async function postgresStoreChecks(store: SessionStore): Promise<DoctorCheck[]> {
  if (!(store instanceof PostgresSessionStore)) return [];
  const checks: DoctorCheck[] = [];
  try {
    const [server] = await store.query<{ version: string }>(
      "select current_setting('server_version') as version",
    );
    checks.push({
      name: 'store connection',
      status: 'ok',
      detail: `${store.where}, PostgreSQL ${server?.version ?? '?'}`,
    });
  } catch (error) {
    checks.push({
      name: 'store connection',
      status: 'fail',
      detail: (error as Error).message,
      fix: fixes.STORE_UNREACHABLE!,
    });
    return checks;
  }
  const state = store.schemaState;
  checks.push(
    state.readOnly
      ? {
          name: 'store schema',
          status: 'warn',
          detail: `"${store.schema}" at version ${state.version}, but the database is read-only: sessions can be read, not written`,
          fix: fixes.STORE_READ_ONLY!,
        }
      : {
          name: 'store schema',
          status: 'ok',
          detail: `"${store.schema}" at version ${state.version} (this Rein: ${postgresSchemaVersion})${state.migrated > 0 ? `, ${state.migrated} migration${state.migrated === 1 ? '' : 's'} applied now` : ''}`,
        },
  );
  try {
    const [leases] = await store.query<{ held: string; expired: string }>(
      `select count(*) filter (where holder is not null and expires_at >= clock_timestamp())::text as held,
              count(*) filter (where holder is not null and expires_at < clock_timestamp())::text as expired
       from ${store.schema}.leases`,
    );
    const held = Number(leases?.held ?? 0);
    const expired = Number(leases?.expired ?? 0);
    checks.push({
      name: 'store leases',
      status: 'ok',
      detail:
        `${held} session${held === 1 ? '' : 's'} held by a live writer` +
        (expired > 0
          ? `, ${expired} expired (a server stopped; the next open takes them over and repairs them)`
          : '') +
        `; leases last ${store.leaseMs} ms`,
    });
  } catch (error) {
    checks.push({
      name: 'store leases',
      status: 'fail',
      detail: `the lease table cannot be read: ${(error as Error).message}`,
      fix: `check the privileges of the database user on ${store.schema}.leases`,
    });
  }
  return checks;
}
