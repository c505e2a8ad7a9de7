import { SessionError } from '../session-error.ts';
import { checkSchemaName } from './postgres-schema.ts';

/** A checked PostgreSQL store URL. */
export interface PostgresUrl {
  /** What node-postgres connects with (Rein's own parameters removed). */
  connectionString: string;
  /** The database for messages: the URL without its password or parameters. */
  where: string;
  schema: string;
  leaseMs?: number;
}

/** True for a `postgres://` or `postgresql://` URL (the store selection's test). */
export function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text.trim());
}

/**
 * Parses a store URL: `postgres[ql]://user:password@host:port/database`, with Rein's own query
 * parameters `schema` and `lease_ms` (the rest, e.g. `sslmode` or `options`, go to the driver). Throws
 * SessionError `STORE_URL` naming what is wrong, without echoing a password.
 */
export function parsePostgresUrl(text: string): PostgresUrl {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new SessionError(
      'STORE_URL',
      'the session store URL is not a valid URL (expected postgres://user:password@host:port/database)',
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new SessionError(
      'STORE_URL',
      `the session store URL must start with postgres:// or postgresql://, not ${url.protocol}//`,
    );
  }
  if (url.hostname === '') throw new SessionError('STORE_URL', 'the session store URL names no host');
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '' || database.includes('/')) {
    throw new SessionError(
      'STORE_URL',
      'the session store URL must name one database: postgres://host/<database>',
    );
  }
  const schema = checkSchemaName(url.searchParams.get('schema') ?? 'rein');
  const leaseText = url.searchParams.get('lease_ms');
  url.searchParams.delete('schema');
  url.searchParams.delete('lease_ms');
  const where = `postgres://${url.username !== '' ? `${decodeURIComponent(url.username)}@` : ''}${url.host}/${database}`;
  const parsed: PostgresUrl = { connectionString: url.toString(), where, schema };
  if (leaseText !== null) {
    const leaseMs = Number(leaseText);
    if (!Number.isSafeInteger(leaseMs) || leaseMs < 100) {
      throw new SessionError(
        'STORE_URL',
        `lease_ms must be a whole number of milliseconds ≥ 100, not ${JSON.stringify(leaseText)}`,
      );
    }
    parsed.leaseMs = leaseMs;
  }
  return parsed;
}
