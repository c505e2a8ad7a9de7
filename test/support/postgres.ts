import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { postgresMigrations } from '../../src/session/stores/postgres-schema.ts';

/** The test database URL (`scripts/postgres-test-server.sh start` prints it), if any. */
export const postgresTestUrl: string | undefined = process.env.REIN_TEST_POSTGRES_URL || undefined;

/**
 * Describes tests that need PostgreSQL. Without `REIN_TEST_POSTGRES_URL` they are skipped with the
 * reason shown, except under CI, where a missing database fails instead of hiding the tests.
 */
export function describePostgres(name: string, body: (url: string) => void): void {
  if (postgresTestUrl !== undefined) {
    describe(name, () => body(postgresTestUrl));
    return;
  }
  if (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false') {
    describe(name, () => {
      it('needs REIN_TEST_POSTGRES_URL under CI', () => {
        throw new Error(
          'CI is set but REIN_TEST_POSTGRES_URL is not: .ci/run starts PostgreSQL and exports it',
        );
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: no REIN_TEST_POSTGRES_URL; run eval "$(scripts/postgres-test-server.sh start)")`, () => {
    body('');
  });
}

/** A fresh schema name and the URL that selects it: every test gets empty tables of its own. */
export function freshSchemaUrl(url: string): { url: string; schema: string } {
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return { url: parsed.toString(), schema };
}

/** Runs SQL as the test user directly (setup and inspection, never the code under test). */
export async function withTestDatabase<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const clean = new URL(url);
  clean.searchParams.delete('schema');
  clean.searchParams.delete('lease_ms');
  const client = new pg.Client({ connectionString: clean.toString() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Drops a test schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  await withTestDatabase(url, (client) => client.query(`drop schema if exists ${schema} cascade`));
}

/** Creates `schema` as Rein's schema version `version` left it: its version row, then migrations 1 to `version`. */
export async function createSchemaAtVersion(
  client: pg.Client,
  schema: string,
  version: number,
): Promise<void> {
  await client.query(`create schema ${schema}`);
  await client.query(
    `create table ${schema}.schema_version (product text not null, version integer not null, ` +
      'migrated_at timestamptz not null default now())',
  );
  await client.query(`insert into ${schema}.schema_version (product, version) values ('rein-sessions', $1)`, [
    version,
  ]);
  for (const migration of postgresMigrations.slice(0, version)) await client.query(migration(schema));
}

/** Fresh schemas for one describe block (see `freshSchemaUrl`), each dropped after the block's tests. */
export function freshSchemas(url: string): () => { url: string; schema: string } {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  return () => {
    const made = freshSchemaUrl(url);
    schemas.push(made.schema);
    return made;
  };
}
