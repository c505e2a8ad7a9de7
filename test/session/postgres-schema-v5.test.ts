import { expect, it } from 'vitest';
import type pg from 'pg';
import type { PoolClient } from 'pg';
import { PostgresSessionStore } from '../../src/index.ts';
import type { Session } from '../../src/index.ts';
import { acquireLease } from '../../src/session/stores/postgres-lease.ts';
import { postgresMigrations } from '../../src/session/stores/postgres-schema.ts';
import {
  createSchemaAtVersion,
  freshSchemas,
  describePostgres,
  withTestDatabase,
} from '../support/postgres.ts';
import { appendTextTurn } from '../support/session-turns.ts';

async function failureOf(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a failure');
}

/** Every batch row of a schema, in key order: what a migration must leave byte for byte. */
async function batchRows(client: pg.Client, schema: string): Promise<unknown[]> {
  return (
    await client.query(
      `select session_id, first_seq::text, line_count, lines from ${schema}.event_batches
       order by session_id, first_seq`,
    )
  ).rows;
}

/** The session's fencing token as the session row and the lease row hold it. */
async function tokens(
  client: pg.Client,
  schema: string,
  id: string,
): Promise<{ session: string; lease: string }> {
  return (
    await client.query<{ session: string; lease: string }>(
      `select s.lease_token::text as session, l.token::text as lease from ${schema}.sessions s
       join ${schema}.leases l on l.session_id = s.id where s.id = $1`,
      [id],
    )
  ).rows[0]!;
}

/** Waits until `count` backends wait for a lock in a statement naming `schema`. */
async function lockWaiters(client: pg.Client, schema: string, count: number): Promise<void> {
  await expect
    .poll(
      async () =>
        Number(
          (
            await client.query<{ n: string }>(
              `select count(*)::text as n from pg_stat_activity where wait_event_type = 'Lock'
               and datname = current_database()`,
            )
          ).rows[0]!.n,
        ),
      { timeout: 10_000, interval: 20 },
    )
    .toBe(count);
}

describePostgres('PostgresSessionStore: schema version 5 (fence in the session row, paced NOTIFY)', (url) => {
  const fresh = freshSchemas(url);

  /**
   * A version 4 schema holding the rows of two real sessions (written by this Rein, then copied): one
   * released (lease token 7, no holder), one whose lease is held (token 9). Returns its URL and schema.
   */
  async function version4Schema(): Promise<{ url: string; schema: string; exported: Map<string, string> }> {
    const source = fresh();
    const writer = await PostgresSessionStore.connect({ url: source.url });
    const exported = new Map<string, string>();
    for (const id of ['kept', 'held']) {
      const session = await writer.create({ id, createdAt: 1000 });
      appendTextTurn(session, 'hello', `hi from ${id}`);
      await writer.flush(session);
      appendTextTurn(session, 'again', 'still here');
      await writer.release(session);
      exported.set(id, await writer.exportLog(id));
    }
    await writer.close();
    const older = fresh();
    await withTestDatabase(url, async (client) => {
      await createSchemaAtVersion(client, older.schema, 4);
      await client.query(
        `insert into ${older.schema}.sessions (id, header, created_at, updated_at, event_count, format)
         select id, header, created_at, updated_at, event_count, format from ${source.schema}.sessions`,
      );
      await client.query(
        `insert into ${older.schema}.event_batches select * from ${source.schema}.event_batches`,
      );
      await client.query(
        `insert into ${older.schema}.session_snapshots select * from ${source.schema}.session_snapshots`,
      );
      await client.query(
        `insert into ${older.schema}.leases (session_id, token, holder, acquired_at, expires_at) values
         ('kept', 7, null, null, '-infinity'),
         ('held', 9, '{"pid":1,"host":"elsewhere"}', 1000, clock_timestamp() + interval '1 hour')`,
      );
      await client.query(`select setval('${older.schema}.fence_tokens', 9)`);
    });
    return { ...older, exported };
  }

  it('migrates a version 4 schema in place: batch rows byte-identical, tokens copied, a rerun changes nothing', async () => {
    const older = await version4Schema();
    const before = await withTestDatabase(url, (client) => batchRows(client, older.schema));
    expect(before.length).toBeGreaterThanOrEqual(4);

    const migrated = await PostgresSessionStore.connect({ url: older.url });
    try {
      expect(migrated.schemaState).toMatchObject({ version: 5, migrated: 1 });
      await withTestDatabase(url, async (client) => {
        expect(await batchRows(client, older.schema)).toEqual(before);
        expect(await tokens(client, older.schema, 'kept')).toEqual({ session: '7', lease: '7' });
        expect(await tokens(client, older.schema, 'held')).toEqual({ session: '9', lease: '9' });
        // The migration run again by hand (as a crashed, retried one would) finds nothing to do.
        await client.query(postgresMigrations[4]!(older.schema));
        expect(await batchRows(client, older.schema)).toEqual(before);
        // Version 4's append function is gone: a version 4 server still running cannot slip past the fence.
        const functions = await client.query<{ args: string }>(
          `select pg_get_function_identity_arguments(oid) as args from pg_proc
           where pronamespace = $1::regnamespace and proname = 'append_events'`,
          [older.schema],
        );
        expect(functions.rows.map((row) => row.args)).toEqual([
          'p_session text, p_token bigint, p_first bigint, p_count integer, p_lines text, p_time bigint, p_sync boolean, p_notify boolean, p_channel text',
        ]);
      });
      for (const [id, text] of older.exported) expect(await migrated.exportLog(id)).toBe(text);
      // The held lease is still held; the released one is taken with a new, larger token and appends.
      expect(await failureOf(migrated.open('held'))).toMatchObject({ code: 'SESSION_LOCKED' });
      const reopened = await migrated.open('kept');
      appendTextTurn(reopened, 'third', 'after the migration');
      await migrated.release(reopened);
      expect((await migrated.read('kept')).events).toEqual(reopened.events);
      await withTestDatabase(url, async (client) => {
        const after = await tokens(client, older.schema, 'kept');
        expect(after.session).toBe(after.lease);
        expect(Number(after.session)).toBeGreaterThan(9);
      });
    } finally {
      await migrated.close();
    }
  });

  it('two servers migrating one version 4 schema at once: one migrates, the other finds it current', async () => {
    const older = await version4Schema();
    const before = await withTestDatabase(url, (client) => batchRows(client, older.schema));
    const stores = await Promise.all([
      PostgresSessionStore.connect({ url: older.url }),
      PostgresSessionStore.connect({ url: older.url }),
    ]);
    try {
      expect(stores.map((store) => store.schemaState.version)).toEqual([5, 5]);
      expect(stores.map((store) => store.schemaState.migrated).sort()).toEqual([0, 1]);
      await withTestDatabase(url, async (client) => {
        expect(await batchRows(client, older.schema)).toEqual(before);
        expect((await client.query(`select version from ${older.schema}.schema_version`)).rows).toEqual([
          { version: 5 },
        ]);
      });
      for (const [id, text] of older.exported) expect(await stores[1]!.exportLog(id)).toBe(text);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('fences a holder whose lease was taken over: its appends are refused typed, the new holder is unaffected', async () => {
    const target = fresh();
    const first = await PostgresSessionStore.connect({ url: target.url });
    const second = await PostgresSessionStore.connect({ url: target.url });
    try {
      const old = await first.create({ id: 'taken', createdAt: 1000 });
      appendTextTurn(old, 'hello', 'hi');
      await first.flush(old);
      const oldToken = await withTestDatabase(url, async (client) => {
        // The holder stopped renewing (paused past its expiry), as the SIGSTOP test does with a process.
        await client.query(`update ${target.schema}.leases set expires_at = '-infinity'`);
        return (await tokens(client, target.schema, 'taken')).session;
      });
      const taken = await second.open('taken');
      expect(taken.events.slice(0, old.length)).toEqual(old.events);

      appendTextTurn(old, 'too late', 'never stored');
      const refused = await failureOf(old.checkpoint('tool'));
      expect(refused).toMatchObject({ code: 'CHECKPOINT_FAILED', cause: { code: 'SESSION_FENCED' } });
      // The function refuses the old token itself, whatever the client does.
      await withTestDatabase(url, async (client) => {
        const direct = await failureOf(
          client.query(
            `select ${target.schema}.append_events('taken', $1, $2, 1, 'x\n', 0, true, true, 'c')`,
            [oldToken, taken.length],
          ),
        );
        expect(direct).toMatchObject({ code: 'RE001' });
        expect(await tokens(client, target.schema, 'taken')).not.toMatchObject({ session: oldToken });
      });

      appendTextTurn(taken, 'new holder', 'still writes');
      await second.release(taken);
      const stored = await second.read('taken');
      expect(stored.events).toEqual(taken.events);
      expect(stored.events.some((event) => JSON.stringify(event.data).includes('never stored'))).toBe(false);
      await first.release(old).catch(() => {
        // Its release re-reports the fence; the store only needs the session dropped.
      });
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('a takeover waits for the old holder append in flight: that batch is kept, the next is refused', async () => {
    const target = fresh();
    const first = await PostgresSessionStore.connect({ url: target.url, durability: 'process-crash' });
    const second = await PostgresSessionStore.connect({ url: target.url });
    try {
      const old = await first.create({ id: 'racing', createdAt: 1000 });
      appendTextTurn(old, 'hello', 'hi');
      await first.flush(old);
      let inFlight: Promise<void> | undefined;
      let takeover: Promise<Session> | undefined;
      await withTestDatabase(url, async (blocker) => {
        // Holding the session row's lock makes the old holder's append wait, then the takeover after it.
        await blocker.query('begin');
        await blocker.query(`select 1 from ${target.schema}.sessions where id = 'racing' for update`);
        appendTextTurn(old, 'in flight', 'kept');
        inFlight = old.checkpoint('tool');
        await withTestDatabase(url, async (watcher) => {
          await lockWaiters(watcher, target.schema, 1);
          await watcher.query(`update ${target.schema}.leases set expires_at = '-infinity'`);
          takeover = second.open('racing');
          await lockWaiters(watcher, target.schema, 2);
        });
        await blocker.query('commit');
      });
      await inFlight;
      const taken = await takeover!;
      expect(taken.events.slice(0, old.length)).toEqual(old.events);

      appendTextTurn(old, 'after the takeover', 'never stored');
      expect(await failureOf(old.checkpoint('tool'))).toMatchObject({
        code: 'CHECKPOINT_FAILED',
        cause: { code: 'SESSION_FENCED' },
      });
      appendTextTurn(taken, 'new holder', 'writes on');
      await second.release(taken);
      expect((await second.read('racing')).events).toEqual(taken.events);
      await first.release(old).catch(() => {
        // Its release re-reports the fence; the store only needs the session dropped.
      });
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('refuses a lease on a missing session with SESSION_NOT_FOUND', async () => {
    const target = fresh();
    const store = await PostgresSessionStore.connect({ url: target.url });
    try {
      await withTestDatabase(url, async (client) => {
        const missing = await failureOf(
          acquireLease(client as unknown as PoolClient, target.schema, 'missing', 1000),
        );
        expect(missing).toMatchObject({ code: 'SESSION_NOT_FOUND' });
        expect((await client.query(`select * from ${target.schema}.leases`)).rows).toEqual([]);
      });
    } finally {
      await store.close();
    }
  });

  it('paces NOTIFY: a burst of unsynced commits is announced at most once an interval, its last batch late', async () => {
    const target = fresh();
    const writer = await PostgresSessionStore.connect({
      url: target.url,
      durability: 'process-crash',
      notifyIntervalMs: 50,
    });
    const reader = await PostgresSessionStore.connect({ url: target.url });
    const controller = new AbortController();
    await withTestDatabase(url, async (listener) => {
      const heard: Array<{ payload: string; at: number }> = [];
      listener.on('notification', (message) =>
        heard.push({ payload: message.payload ?? '', at: performance.now() }),
      );
      await listener.query(`listen ${target.schema}_events`);
      try {
        const session = await writer.create({ id: 'burst', createdAt: 1000 });
        const delivered: unknown[] = [];
        reader.follow('burst', {
          from: 0,
          signal: controller.signal,
          onEvents: (events) => delivered.push(...events),
        });
        const commits = 20;
        const started = performance.now();
        for (let index = 0; index < commits; index++) {
          appendTextTurn(session, `step ${index}`, 'done');
          await session.checkpoint('tool');
        }
        const lastCommit = performance.now();
        const final = `burst ${session.length}`;
        await expect.poll(() => heard.at(-1)?.payload, { timeout: 5000, interval: 5 }).toBe(final);
        const announced = heard.at(-1)!.at;
        // The late NOTIFY follows the last commit within the interval (plus this machine's scheduling).
        expect(announced - lastCommit).toBeLessThan(50 + 500);
        const rows = await listener.query<{ n: string }>(
          `select count(*)::text as n from ${target.schema}.event_batches where session_id = 'burst'`,
        );
        expect(Number(rows.rows[0]!.n)).toBe(commits);
        // At most one an interval, counting the first (sent at once) and the late one.
        expect(heard.length).toBeLessThanOrEqual(Math.ceil((announced - started) / 50) + 1);
        expect(heard.length).toBeLessThan(commits);
        await expect.poll(() => delivered.length, { timeout: 5000 }).toBe(session.length);
        expect(delivered).toEqual(session.events);
        await writer.release(session);
      } finally {
        controller.abort();
        await writer.close();
        await reader.close();
      }
    });
  });

  it('NOTIFYs synced commits at once and sends an owed one at release, however long the interval', async () => {
    const target = fresh();
    const writer = await PostgresSessionStore.connect({
      url: target.url,
      durability: 'process-crash',
      notifyIntervalMs: 60_000,
    });
    await withTestDatabase(url, async (listener) => {
      const heard: string[] = [];
      listener.on('notification', (message) => heard.push(message.payload ?? ''));
      await listener.query(`listen ${target.schema}_events`);
      try {
        const session = await writer.create({ id: 'paced', createdAt: 1000 });
        appendTextTurn(session, 'one', 'first commit: announced at once');
        await session.checkpoint('tool');
        const first = session.length;
        appendTextTurn(session, 'two', 'inside the interval: owed');
        await session.checkpoint('tool');
        // A round trip on the listener's connection delivers what was sent before it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await listener.query('select 1');
        expect(heard).toEqual([`paced ${first}`]);
        // Under process-crash a turn end is committed like a tool checkpoint: not synced, so paced.
        appendTextTurn(session, 'three', 'a turn end: owed');
        await session.checkpoint('turn-end');
        await new Promise((resolve) => setTimeout(resolve, 200));
        await listener.query('select 1');
        expect(heard).toEqual([`paced ${first}`]);
        appendTextTurn(session, 'four', 'a synced commit (a flush)');
        await session.checkpoint('flush');
        const synced = session.length;
        await expect.poll(() => heard.length, { timeout: 5000 }).toBe(2);
        appendTextTurn(session, 'five', 'owed until the release');
        await session.checkpoint('tool');
        const last = session.length;
        await writer.release(session);
        await expect.poll(() => heard.length, { timeout: 5000 }).toBe(3);
        expect(heard).toEqual([`paced ${first}`, `paced ${synced}`, `paced ${last}`]);
      } finally {
        await writer.close();
      }
    });
  });
});
