import { expect, it } from 'vitest';
import type { AnySessionEvent, Session } from '../../src/index.ts';
import { PostgresSessionStore } from '../../src/index.ts';
import {
  compactLogFormat,
  encodeSessionLog,
  fullEnvelopeFormat,
} from '../../src/session/stores/session-log-format.ts';
import {
  createSchemaAtVersion,
  freshSchemas,
  describePostgres,
  withTestDatabase,
} from '../support/postgres.ts';
import { appendOpenToolTurn, appendTextTurn } from '../support/session-turns.ts';

interface StoredRows {
  format: number;
  header: string;
  /** The batch rows concatenated in seq order. */
  body: string;
  /** The `events` view: seq, format, type and raw line of every event. */
  view: Array<{ seq: number; format: number; type: string | null; line: string }>;
}

async function storedRows(url: string, schema: string, id: string): Promise<StoredRows> {
  return withTestDatabase(url, async (client) => {
    const session = (
      await client.query<{ format: number; header: string; body: string | null }>(
        `select format, header, (select string_agg(lines, '' order by first_seq) from ${schema}.event_batches
           where session_id = $1) as body from ${schema}.sessions where id = $1`,
        [id],
      )
    ).rows[0]!;
    const view = await client.query<{ at: string; format: number; type: string | null; line: string }>(
      `select seq::text as at, format, type, line from ${schema}.events where session_id = $1 order by seq`,
      [id],
    );
    return {
      format: session.format,
      header: session.header,
      body: session.body ?? '',
      view: view.rows.map(({ at, ...row }) => ({ seq: Number(at), ...row })),
    };
  });
}

/** Everything an opened session derives from its log, as comparable values. */
function stateOf(session: Session): Record<string, unknown> {
  return {
    length: session.length,
    firstLiveSeq: session.firstLiveSeq,
    lastTurn: session.lastTurn,
    openTurn: session.openTurn,
    generation: session.replaceGeneration,
    nodes: [...session.surfaceNodes],
    messages: JSON.stringify(session.derivedMessages()),
    events: session.log.slice().map((event) => JSON.stringify(event)),
    types: Array.from({ length: session.length }, (_, seq) => session.log.typeAt(seq)),
  };
}

async function failureOf(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a failure');
}

describePostgres('PostgresSessionStore: format 1 (compact) rows and the version 4 schema', (url) => {
  const fresh = freshSchemas(url);

  it('stores a new session as the disk store writes it: format 1 lines, continued by a crash repair and read by a follower', async () => {
    const target = fresh();
    const first = await PostgresSessionStore.connect({ url: target.url, leaseMs: 200 });
    const session = await first.create({ id: 'compact', createdAt: 1000 });
    appendTextTurn(session, 'hello', 'hi');
    appendOpenToolTurn(session);
    await first.flush(session);
    const written = session.events;
    // The writer dies without releasing: no more commits, the lease expires on its own.
    await first.close();

    const rows = await storedRows(url, target.schema, 'compact');
    expect(rows.format).toBe(compactLogFormat);
    // The exact text of a disk store's file holding these events: its header line, then compact lines.
    expect(`${rows.header}\n${rows.body}`).toBe(encodeSessionLog(session.header, written, compactLogFormat));
    expect(rows.view.filter((row) => row.line.startsWith('['))).not.toHaveLength(0);
    expect(rows.view.map((row) => [row.seq, row.format, row.type])).toEqual(
      written.map((event) => [event.seq, compactLogFormat, event.type]),
    );

    await new Promise((done) => setTimeout(done, 300));
    const second = await PostgresSessionStore.connect({ url: target.url });
    const reader = await PostgresSessionStore.connect({ url: target.url });
    const controller = new AbortController();
    try {
      const resumed = await second.open('compact');
      // The repair's closers and the end of the seed, committed in format 1 after the stored lines.
      expect(resumed.events.slice(written.length).map((event) => event.type)).toEqual([
        'tool/result',
        'tool/result',
        'step/end',
        'turn/end',
        'session/end-seed',
      ]);
      const delivered: AnySessionEvent[] = [];
      const late: AnySessionEvent[] = [];
      reader.follow('compact', {
        from: 0,
        signal: controller.signal,
        onEvents: (events) => delivered.push(...events),
      });
      reader.follow('compact', {
        from: written.length + 2,
        signal: controller.signal,
        onEvents: (events) => late.push(...events),
      });
      appendTextTurn(resumed, 'after the repair', 'still compact');
      await second.release(resumed);
      const stored = await reader.read('compact');
      expect(stored.events).toEqual(resumed.events);
      const after = await storedRows(url, target.schema, 'compact');
      expect(`${after.header}\n${after.body}`).toBe(
        encodeSessionLog(stored.header, stored.events, compactLogFormat),
      );
      expect(await reader.exportLog('compact')).toBe(
        encodeSessionLog(stored.header, stored.events, fullEnvelopeFormat),
      );
      await expect.poll(() => delivered.length, { timeout: 10_000 }).toBe(stored.events.length);
      expect(delivered).toEqual(stored.events);
      await expect
        .poll(() => late.length, { timeout: 10_000 })
        .toBe(stored.events.length - written.length - 2);
      expect(late).toEqual(stored.events.slice(written.length + 2));
    } finally {
      controller.abort();
      await second.close();
      await reader.close();
    }
  });

  it('migrates a version 3 schema in place: its format 0 session keeps opening and growing in format 0; new ones are format 1', async () => {
    // A real session's full envelopes, as version 3's writer stored them.
    const source = fresh();
    const current = await PostgresSessionStore.connect({ url: source.url });
    const made = await current.create({ id: 'old', createdAt: 1000 });
    appendTextTurn(made, 'hello', 'hi');
    appendTextTurn(made, 'again', 'still here');
    await current.release(made);
    const exported = await current.exportLog('old');
    await current.close();
    const [headerLine, ...lines] = exported.slice(0, -1).split('\n');

    const older = fresh();
    await withTestDatabase(url, async (client) => {
      await createSchemaAtVersion(client, older.schema, 3);
      await client.query(
        `insert into ${older.schema}.sessions (id, header, created_at, updated_at, event_count) values ('old', $1, 1000, 1000, 0)`,
        [headerLine],
      );
      await client.query(
        `insert into ${older.schema}.leases (session_id, token, holder, acquired_at, expires_at) values ('old', 1, null, null, '-infinity')`,
      );
      // Two commits by version 3's append function: a batch row of full-envelope lines each.
      for (const [first, batch] of [
        [0, lines.slice(0, 5)],
        [5, lines.slice(5)],
      ] as const) {
        await client.query(
          `select ${older.schema}.append_events('old', 1, $1, $2, $3, 2000, 30000, true, 'c')`,
          [first, batch.length, `${batch.join('\n')}\n`],
        );
      }
    });

    const migrated = await PostgresSessionStore.connect({ url: older.url });
    try {
      expect(migrated.schemaState).toMatchObject({ version: 5, migrated: 2 });
      expect(await migrated.exportLog('old')).toBe(exported);
      const before = await storedRows(url, older.schema, 'old');
      expect(before.format).toBe(fullEnvelopeFormat);
      expect(before.view).toEqual(
        lines.map((line, seq) => ({
          seq,
          format: fullEnvelopeFormat,
          type: (JSON.parse(line) as { type: string }).type,
          line,
        })),
      );

      const reopened = await migrated.open('old');
      appendTextTurn(reopened, 'third', 'appended after the migration');
      await migrated.release(reopened);
      const stored = await migrated.read('old');
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
      // Still format 0 from its header to its last line: the text a full export gives, byte for byte.
      const after = await storedRows(url, older.schema, 'old');
      expect(after.format).toBe(fullEnvelopeFormat);
      expect(`${after.header}\n${after.body}`).toBe(await migrated.exportLog('old'));
      expect(after.view.every((row) => row.line.startsWith('{"type":'))).toBe(true);

      const fresher = await migrated.create({ id: 'new', createdAt: 5000 });
      appendTextTurn(fresher, 'hello', 'hi');
      await migrated.release(fresher);
      expect((await storedRows(url, older.schema, 'new')).format).toBe(compactLogFormat);
    } finally {
      await migrated.close();
    }
  });

  it('refuses a corrupt compact row with its line and offset, changing nothing; a salvage fork keeps the good prefix', async () => {
    const target = fresh();
    const store = await PostgresSessionStore.connect({ url: target.url });
    try {
      const session = await store.create({ id: 'damaged', createdAt: 1000 });
      appendTextTurn(session, 'one', 'first');
      appendTextTurn(session, 'two', 'second');
      await store.release(session);
      const intact = await storedRows(url, target.schema, 'damaged');
      // The second turn's `turn/start` (seq 6) becomes a line of a kind no format 1 writer makes.
      expect(intact.view[6]!.type).toBe('turn/start');
      const damagedBody = intact.body.replace(`${intact.view[6]!.line}\n`, '[99,0,0]\n');
      expect(damagedBody).not.toBe(intact.body);
      await withTestDatabase(url, (client) =>
        client.query(`update ${target.schema}.event_batches set lines = $1 where session_id = 'damaged'`, [
          damagedBody,
        ]),
      );
      const offset =
        Buffer.byteLength(`${intact.header}\n`) +
        Buffer.byteLength(
          intact.view
            .slice(0, 6)
            .map((row) => `${row.line}\n`)
            .join(''),
        );

      for (const attempt of [
        () => store.read('damaged'),
        () => store.open('damaged'),
        () => store.exportLog('damaged'),
      ]) {
        expect(await failureOf(attempt())).toMatchObject({
          code: 'SESSION_CORRUPT',
          message: expect.stringContaining(`line 8, byte offset ${offset}: the record has an unknown kind`),
        });
      }
      expect(await storedRows(url, target.schema, 'damaged')).toMatchObject({ body: damagedBody });
      expect(await store.holderOf('damaged')).toBeUndefined();
      const [summary] = await store.list();
      expect(summary).toMatchObject({ id: 'damaged', corrupt: { line: 8, offset } });

      const fork = await store.fork('damaged', { id: 'salvaged', salvage: true });
      const salvaged = await store.read(fork.id);
      expect(salvaged.events.map((event) => event.type)).toEqual([
        'turn/start',
        'step/start',
        'user/message',
        'assistant/message',
        'step/end',
        'turn/end',
        'session/end-seed',
      ]);
      expect((await storedRows(url, target.schema, 'salvaged')).format).toBe(compactLogFormat);

      // A follower delivers the good prefix and stops at the bad line.
      const delivered: AnySessionEvent[] = [];
      const controller = new AbortController();
      store.follow('damaged', {
        from: 0,
        signal: controller.signal,
        onEvents: (events) => delivered.push(...events),
      });
      await expect.poll(() => delivered.length, { timeout: 10_000 }).toBe(6);
      await new Promise((done) => setTimeout(done, 100));
      controller.abort();
      expect(delivered.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      await store.close();
    }
  });

  it('resumes a format 1 session from its snapshot row as a full read would; a snapshot the rows do not match is ignored', async () => {
    const target = fresh();
    const store = await PostgresSessionStore.connect({ url: target.url });
    const snapshots = (): Promise<Array<{ id: string; events: number }>> =>
      withTestDatabase(url, async (client) =>
        (
          await client.query<{ snapshot: string }>(
            `select snapshot from ${target.schema}.session_snapshots order by session_id`,
          )
        ).rows.map(
          (row) => (JSON.parse(row.snapshot) as { snapshot: { id: string; events: number } }).snapshot,
        ),
      );
    try {
      const made = await store.create({ id: 'snap', createdAt: 1000 });
      for (let turn = 0; turn < 5; turn++) appendTextTurn(made, `prompt ${turn}`, `answer ${turn}`);
      await store.release(made);
      // Saved at release: the whole log, its last turn closed.
      expect(await snapshots()).toMatchObject([{ id: 'snap', events: 30 }]);

      const first = await store.open('snap');
      // The covered prefix is indexed, not parsed; the open appended its `session/end-seed`.
      expect(first.deferredEvents).toBe(30);
      expect(first.log.typeAt(30)).toBe('session/end-seed');
      await store.release(first);
      expect(await snapshots()).toMatchObject([{ id: 'snap', events: 31 }]);
      const resumed = await store.open('snap');
      expect(resumed.deferredEvents).toBe(31);
      const fromSnapshot = stateOf(resumed);
      await store.release(resumed);

      await withTestDatabase(url, (client) => client.query(`delete from ${target.schema}.session_snapshots`));
      const full = await store.open('snap');
      expect(full.deferredEvents).toBe(0);
      expect(stateOf(full)).toEqual(fromSnapshot);
      await store.release(full);
      expect(await snapshots()).toMatchObject([{ id: 'snap', events: 31 }]);

      // The rows edited by hand inside the covered lines: the snapshot's hash no longer matches them.
      await withTestDatabase(url, (client) =>
        client.query(
          `update ${target.schema}.event_batches set lines = replace(lines, 'answer 1', 'ANSWER 1') where session_id = 'snap'`,
        ),
      );
      const edited = await store.open('snap');
      expect(edited.deferredEvents).toBe(0);
      expect(JSON.stringify(edited.log.slice())).toContain('ANSWER 1');
      expect(stateOf(edited)).toEqual({
        ...fromSnapshot,
        messages: (fromSnapshot.messages as string).replace('answer 1', 'ANSWER 1'),
        events: (fromSnapshot.events as string[]).map((event) => event.replace('answer 1', 'ANSWER 1')),
      });
      await store.release(edited);

      await store.delete('snap');
      expect(await snapshots()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
