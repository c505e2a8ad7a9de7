import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import { DiskSessionStore, PostgresSessionStore } from '../../src/index.ts';
import { runCli } from '../../src/cli/main.ts';
import { runRein } from '../cli/rein-process.ts';
import { describePostgres, dropSchema, freshSchemaUrl, withTestDatabase } from '../support/postgres.ts';
import { appendOpenToolTurn, appendTextTurn } from './store-conformance.ts';

function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (error as { code?: string }).code,
  );
}

async function failureOf(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a failure');
}

/** Runs a `rein` command line in this process and captures what it prints. */
async function captureCli(
  argv: readonly string[],
  cwd: string,
  home: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdin: Readable.from([]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { REIN_HOME: home, NO_COLOR: '1', REIN_DEMO_DELAY_MS: '0' },
    cwd,
  });
  return { code, stdout, stderr };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

async function tablesOf(url: string, schema: string): Promise<string[]> {
  return withTestDatabase(url, async (client) =>
    (
      await client.query<{ name: string }>(
        'select table_name as name from information_schema.tables where table_schema = $1 order by 1',
        [schema],
      )
    ).rows.map((row) => row.name),
  );
}

describePostgres('PostgresSessionStore: bad input, follow, export and import', (url) => {
  const schemas: string[] = [];
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'rein-pg-store-'));
  });

  afterAll(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
    await rm(directory, { recursive: true, force: true });
  });

  function fresh(): { url: string; schema: string } {
    const made = freshSchemaUrl(url);
    schemas.push(made.schema);
    return made;
  }

  it('names a wrong URL, an unreachable server, wrong credentials and a missing database', async () => {
    expect(await codeOf(PostgresSessionStore.connect({ url: 'mysql://localhost/rein' }))).toBe('STORE_URL');
    expect(await codeOf(PostgresSessionStore.connect({ url: 'postgres://' }))).toBe('STORE_URL');
    expect(await codeOf(PostgresSessionStore.connect({ url: `${url}?lease_ms=soon` }))).toBe('STORE_URL');
    const parsed = new URL(url);
    const unreachable = new URL(url);
    unreachable.port = String(await freePort());
    expect(await failureOf(PostgresSessionStore.connect({ url: unreachable.toString() }))).toMatchObject({
      code: 'STORE_UNREACHABLE',
      message: expect.stringContaining('ECONNREFUSED'),
    });
    const wrongPassword = new URL(url);
    wrongPassword.password = 'not-the-password';
    const auth = await failureOf(PostgresSessionStore.connect({ url: wrongPassword.toString() }));
    expect(auth.code).toBe('STORE_AUTH');
    expect(auth.message).toContain(`postgres://${parsed.username}@${parsed.host}`);
    expect(auth.message).not.toContain('not-the-password');
    const missing = new URL(url);
    missing.pathname = '/no_such_database';
    expect(await failureOf(PostgresSessionStore.connect({ url: missing.toString() }))).toMatchObject({
      code: 'STORE_UNREACHABLE',
      message: expect.stringContaining('does not exist'),
    });
  });

  it("refuses a schema that is not Rein's and a newer one, changing nothing", async () => {
    const foreign = fresh();
    await withTestDatabase(url, async (client) => {
      await client.query(`create schema ${foreign.schema}`);
      await client.query(`create table ${foreign.schema}.users (id int primary key)`);
    });
    expect(await failureOf(PostgresSessionStore.connect({ url: foreign.url }))).toMatchObject({
      code: 'STORE_FOREIGN',
      message: expect.stringContaining('users'),
    });
    expect(await tablesOf(url, foreign.schema)).toEqual(['users']);

    const newer = fresh();
    const store = await PostgresSessionStore.connect({ url: newer.url });
    const session = await store.create({ id: 'kept' });
    appendTextTurn(session, 'hello', 'hi');
    await store.release(session);
    await store.close();
    await withTestDatabase(url, (client) =>
      client.query(`update ${newer.schema}.schema_version set version = 99`),
    );
    expect(await failureOf(PostgresSessionStore.connect({ url: newer.url }))).toMatchObject({
      code: 'SESSION_VERSION',
      message: expect.stringContaining('version 99'),
    });
    const [row] = await withTestDatabase(
      url,
      async (client) =>
        (
          await client.query<{ version: number; events: string }>(
            `select version, (select count(*) from ${newer.schema}.events)::text as events from ${newer.schema}.schema_version`,
          )
        ).rows,
    );
    expect(row).toEqual({ version: 99, events: '6' });
  });

  it('migrates a version 1 schema in place: its sessions stay, events lose the per-row key, deletes still clean up', async () => {
    const older = fresh();
    const store = await PostgresSessionStore.connect({ url: older.url });
    const session = await store.create({ id: 'old' });
    appendTextTurn(session, 'hello', 'hi');
    await store.release(session);
    await store.close();
    // What version 1 created: the foreign key from events to sessions, and the version row saying 1.
    await withTestDatabase(url, async (client) => {
      await client.query(
        `alter table ${older.schema}.events add constraint events_session_id_fkey foreign key (session_id) ` +
          `references ${older.schema}.sessions (id) on delete cascade`,
      );
      await client.query(`update ${older.schema}.schema_version set version = 1`);
    });
    const keys = (): Promise<string[]> =>
      withTestDatabase(url, async (client) =>
        (
          await client.query<{ name: string }>(
            `select conname as name from pg_constraint where conrelid = '${older.schema}.events'::regclass and contype = 'f'`,
          )
        ).rows.map((row) => row.name),
      );
    expect(await keys()).toEqual(['events_session_id_fkey']);
    const migrated = await PostgresSessionStore.connect({ url: older.url });
    expect(await keys()).toEqual([]);
    expect((await migrated.read('old')).events.map((event) => event.type)).toContain('assistant/message');
    await migrated.delete('old');
    const [left] = await withTestDatabase(
      url,
      async (client) =>
        (
          await client.query<{ version: number; events: string }>(
            `select version, (select count(*) from ${older.schema}.events)::text as events from ${older.schema}.schema_version`,
          )
        ).rows,
    );
    expect(left).toEqual({ version: 2, events: '0' });
    await migrated.close();
  });

  it('on a read-only database: no schema is created; an existing one is read, never written', async () => {
    const readOnly = (target: string): string => {
      const parsed = new URL(target);
      parsed.searchParams.set('options', '-c default_transaction_read_only=on');
      return parsed.toString();
    };
    const empty = fresh();
    expect(await failureOf(PostgresSessionStore.connect({ url: readOnly(empty.url) }))).toMatchObject({
      code: 'STORE_READ_ONLY',
      message: expect.stringContaining('read-only'),
    });
    expect(await tablesOf(url, empty.schema)).toEqual([]);

    const existing = fresh();
    const writer = await PostgresSessionStore.connect({ url: existing.url });
    const session = await writer.create({ id: 'stored' });
    appendTextTurn(session, 'hello', 'hi');
    await writer.release(session);
    await writer.close();
    const replica = await PostgresSessionStore.connect({ url: readOnly(existing.url) });
    try {
      expect(replica.schemaState.readOnly).toBe(true);
      expect((await replica.list()).map((row) => row.id)).toEqual(['stored']);
      expect((await replica.read('stored')).events).toHaveLength(6);
      expect(await codeOf(replica.create({ id: 'new' }))).toBe('STORE_READ_ONLY');
      expect(await codeOf(replica.open('stored'))).toBe('STORE_READ_ONLY');
      expect(await codeOf(replica.delete('stored'))).toBe('STORE_READ_ONLY');
    } finally {
      await replica.close();
    }
  });

  it('follows a session another store writes: every event once, in seq order, across batches', async () => {
    const shared = fresh();
    const writer = await PostgresSessionStore.connect({ url: shared.url, batchWindowMs: 5 });
    const reader = await PostgresSessionStore.connect({ url: shared.url });
    const delivered: AnySessionEvent[] = [];
    const controller = new AbortController();
    try {
      const session = await writer.create({ id: 'followed' });
      reader.follow('followed', {
        from: 0,
        signal: controller.signal,
        onEvents: (events) => delivered.push(...events),
      });
      for (let turn = 0; turn < 12; turn++) {
        appendTextTurn(session, `prompt ${turn}`, `answer ${turn}`);
        if (turn % 3 === 0) await session.checkpoint('turn-end');
        await new Promise((done) => setTimeout(done, 15));
      }
      await writer.release(session);
      const stored = (await reader.read('followed')).events;
      await expect.poll(() => delivered.length, { timeout: 10_000 }).toBe(stored.length);
      expect(delivered).toEqual(stored);
    } finally {
      controller.abort();
      await writer.close();
      await reader.close();
    }
  });

  it('exports and imports between disk and PostgreSQL byte for byte; the CLI shows both the same', async () => {
    const target = fresh();
    const diskRoot = join(directory, 'disk', 'sessions');
    const disk = new DiskSessionStore({ root: diskRoot });
    const session = await disk.create({ id: 'moving', cwd: directory, createdAt: 1000 });
    appendTextTurn(session, 'Émoji ✓ and "quotes"\nsecond line', 'answer with \\ backslash');
    appendOpenToolTurn(session);
    await disk.release(session);
    const diskBytes = await readFile(disk.pathOf('moving'), 'utf8');
    // The export form is every event's full envelope (what PostgreSQL rows hold); the file is compact.
    const diskExport = await disk.exportLog('moving');
    expect(diskExport.length).toBeGreaterThan(diskBytes.length);

    const home = join(directory, 'home');
    const env = { REIN_HOME: home };
    const imported = await runRein(['sessions', 'import', '--store', target.url, diskRoot], {
      cwd: directory,
      env,
    });
    expect(imported.stderr).toBe('');
    expect(imported.stdout).toContain('imported moving');
    const again = await runRein(['sessions', 'import', '--store', target.url, diskRoot], {
      cwd: directory,
      env,
    });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('SESSION_EXISTS');

    const pg = await PostgresSessionStore.connect({ url: target.url });
    try {
      expect(await pg.exportLog('moving')).toBe(diskExport);
    } finally {
      await pg.close();
    }
    const out = join(directory, 'exported');
    const exported = await runRein(['sessions', 'export', '--store', target.url, '--all', '--out', out], {
      cwd: directory,
      env,
    });
    expect(exported.code).toBe(0);
    // Back on disk the events are written in the compact format again: the very bytes of the original.
    expect(await readFile(join(out, 'moving.jsonl'), 'utf8')).toBe(diskBytes);

    // Listing and showing read the same from either store (in-process: the same code as the binary).
    for (const args of [
      ['sessions', '--json'],
      ['show', 'moving'],
      ['show', '--json', 'moving'],
    ]) {
      const fromDisk = await captureCli([...args, '--store', 'disk'], directory, join(directory, 'disk'));
      const fromPostgres = await captureCli([...args, '--store', target.url], directory, home);
      expect(fromDisk.code).toBe(0);
      expect(fromPostgres).toEqual(fromDisk);
    }
  }, 120_000);
});
