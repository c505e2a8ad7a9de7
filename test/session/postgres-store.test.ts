import { spawnSync } from 'node:child_process';
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
import {
  createSchemaAtVersion,
  freshSchemas,
  describePostgres,
  withTestDatabase,
} from '../support/postgres.ts';
import { appendOpenToolTurn, appendTextTurn } from '../support/session-turns.ts';

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
  const fresh = freshSchemas(url);
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'rein-pg-store-'));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

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

  it('migrates a version 1 schema in place: its rows become batches, the log reads back byte for byte, appends and deletes work', async () => {
    // The source log: a real session, written by the current store and exported as full envelopes.
    const source = fresh();
    const current = await PostgresSessionStore.connect({ url: source.url });
    const written = await current.create({ id: 'old', createdAt: 1000 });
    appendTextTurn(written, 'hello', 'hi');
    appendTextTurn(written, 'again', 'still here');
    await current.release(written);
    const exported = await current.exportLog('old');
    await current.close();
    const [headerLine, ...lines] = exported.slice(0, -1).split('\n');

    // A schema exactly as version 1 created it, its rows written by version 1's append function.
    const older = fresh();
    await withTestDatabase(url, async (client) => {
      await createSchemaAtVersion(client, older.schema, 1);
      await client.query(
        `insert into ${older.schema}.sessions (id, header, created_at, updated_at, event_count) values ('old', $1, 1000, 1000, 0)`,
        [headerLine],
      );
      await client.query(
        `insert into ${older.schema}.leases (session_id, token, holder, acquired_at, expires_at) values ('old', 1, null, null, '-infinity')`,
      );
      // Two commits, as a writer makes them; version 1's function takes the lines as text[].
      for (const [first, batch] of [
        [0, lines.slice(0, 5)],
        [5, lines.slice(5)],
      ] as const) {
        await client.query(`select ${older.schema}.append_events('old', 1, $1, $2, 2000, 30000, true, 'c')`, [
          first,
          batch,
        ]);
      }
    });
    const foreignKeys = (): Promise<number> =>
      withTestDatabase(url, async (client) =>
        Number(
          (
            await client.query<{ keys: string }>(
              `select count(*)::text as keys from pg_constraint where connamespace = $1::regnamespace and contype = 'f' and conrelid <> '${older.schema}.leases'::regclass`,
              [older.schema],
            )
          ).rows[0]!.keys,
        ),
      );
    expect(await foreignKeys()).toBe(1);

    const migrated = await PostgresSessionStore.connect({ url: older.url });
    expect(migrated.schemaState).toMatchObject({ version: 5, migrated: 4 });
    expect(await foreignKeys()).toBe(0);
    expect(await migrated.exportLog('old')).toBe(exported);
    const rows = (): Promise<{ version: number; batches: string; events: string; lines: string[] }> =>
      withTestDatabase(url, async (client) => {
        const counts = await client.query<{ version: number; batches: string; events: string }>(
          `select version, (select count(*) from ${older.schema}.event_batches)::text as batches, ` +
            `(select count(*) from ${older.schema}.events)::text as events from ${older.schema}.schema_version`,
        );
        const view = await client.query<{ line: string }>(
          `select line from ${older.schema}.events where session_id = 'old' order by seq`,
        );
        return { ...counts.rows[0]!, lines: view.rows.map((row) => row.line) };
      });
    // The old rows became one batch per 4096 seqs; the events view still lists them one by one.
    expect(await rows()).toEqual({ version: 5, batches: '1', events: String(lines.length), lines });

    const reopened = await migrated.open('old');
    appendTextTurn(reopened, 'third', 'appended after the migration');
    await migrated.release(reopened);
    const stored = await migrated.read('old');
    // The migrated events unchanged, then the reopened writer's two commits (the open's, the release's).
    expect(JSON.stringify(stored.events.slice(0, lines.length))).toBe(`[${lines.join(',')}]`);
    expect(stored.events.slice(lines.length).map((event) => [event.type, event.seq])).toEqual(
      [
        'session/end-seed',
        'turn/start',
        'step/start',
        'user/message',
        'assistant/message',
        'step/end',
        'turn/end',
      ].map((type, index) => [type, lines.length + index]),
    );
    expect((await rows()).batches).toBe('3');

    await migrated.delete('old');
    expect(await rows()).toEqual({ version: 5, batches: '0', events: '0', lines: [] });
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
      // More committed batches than one catch-up page holds.
      for (let turn = 0; turn < 70; turn++) {
        appendTextTurn(session, `short ${turn}`, `reply ${turn}`);
        await writer.flush(session);
      }
      await writer.release(session);
      const stored = (await reader.read('followed')).events;
      await expect.poll(() => delivered.length, { timeout: 10_000 }).toBe(stored.length);
      expect(delivered).toEqual(stored);
      const batches = await withTestDatabase(url, async (client) =>
        (
          await client.query<{ first: string; count: number }>(
            `select first_seq::text as first, line_count as count from ${shared.schema}.event_batches order by first_seq`,
          )
        ).rows.map((row) => [Number(row.first), row.count]),
      );
      expect(batches.length).toBeGreaterThan(70);
      // Late followers starting inside a batch, at a batch's first event, and at the end.
      const inside = batches.find(([, count]) => count! > 2)!;
      for (const from of [inside[0]! + 1, batches[40]![0]!, stored.length]) {
        const late: AnySessionEvent[] = [];
        reader.follow('followed', {
          from,
          signal: controller.signal,
          onEvents: (events) => late.push(...events),
        });
        await expect.poll(() => late.length, { timeout: 10_000 }).toBe(stored.length - from);
        expect(late).toEqual(stored.slice(from));
      }
    } finally {
      controller.abort();
      await writer.close();
      await reader.close();
    }
  });

  it("keeps its connection across a pause longer than the driver's 10 s idle timeout, and an idle store lets its process exit", async () => {
    const target = fresh();
    const store = await PostgresSessionStore.connect({ url: target.url });
    try {
      const backend = async (): Promise<number> =>
        (await store.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;
      const first = await store.create({ id: 'paced' });
      appendTextTurn(first, 'first', 'one');
      await store.release(first);
      const before = await backend();
      // Nothing live: no lease renewal touches the pool while it waits.
      await new Promise((done) => setTimeout(done, 11_000));
      // The same server process (its plans and caches warm) serves the next session's appends.
      expect(await backend()).toBe(before);
      const second = await store.open('paced');
      appendTextTurn(second, 'second', 'two');
      await store.release(second);
      const stored = await store.read('paced');
      const turn = ['turn/start', 'step/start', 'user/message', 'assistant/message', 'step/end', 'turn/end'];
      // Opening a stored session for writing marks where its stored part ends.
      expect(stored.events.map((event) => event.type)).toEqual([...turn, 'session/end-seed', ...turn]);
      expect(stored.events.map((event) => event.seq)).toEqual(stored.events.map((_, index) => index));
    } finally {
      await store.close();
    }
    // A process that used a store and never closed it exits once nothing else is pending.
    const started = Date.now();
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { PostgresSessionStore } from ${JSON.stringify(join(import.meta.dirname, '../../src/index.ts'))};
         const store = await PostgresSessionStore.connect({ url: process.env.STORE_URL });
         await store.query('select 1');`,
      ],
      { env: { ...process.env, STORE_URL: target.url }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(9_000);
  }, 40_000);

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
