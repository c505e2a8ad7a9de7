import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AnySessionEvent, TranscriptCarry } from '../../src/index.ts';
import { PostgresSessionStore, createHarness } from '../../src/index.ts';
import { transcriptCarriesScan } from '../../src/internal.ts';
import { decodeSessionSnapshot, encodeSessionSnapshot } from '../../src/session/stores/session-snapshot.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { describePostgres, dropSchema, freshSchemaUrl, withTestDatabase } from '../support/postgres.ts';
import { expectWholeFold, longResponses, pageThrough } from './history-page-support.ts';
import { readFileTool, serverFixture } from './support.ts';

// The Web UI's history pages over the PostgreSQL store: a server that does not run the session reads it
// through the store's readLog (from the snapshot row) and folds each page's carry on from the transcript
// carries saved with that snapshot, as it does over the disk store.
describePostgres('history pages of a session stored in PostgreSQL', (url) => {
  const id = 'pg-long-session';
  let schema: string;
  let schemaUrl: string;

  const coldOpen = async (): Promise<{
    pages: Awaited<ReturnType<typeof pageThrough>>;
    logged: AnySessionEvent[];
  }> => {
    const store = await PostgresSessionStore.connect({ url: schemaUrl });
    const server = await serverFixture([], { store });
    try {
      const pages = await pageThrough(server, id, 200);
      return { pages, logged: (await store.read(id)).events };
    } finally {
      await server.close();
      await store.close();
    }
  };

  const snapshotText = (): Promise<string> =>
    withTestDatabase(schemaUrl, async (client) => {
      const rows = await client.query<{ snapshot: string }>(
        `select snapshot from ${schema}.session_snapshots where session_id = $1`,
        [id],
      );
      return rows.rows[0]!.snapshot;
    });
  const writeSnapshotText = (text: string): Promise<void> =>
    withTestDatabase(schemaUrl, async (client) => {
      await client.query(`update ${schema}.session_snapshots set snapshot = $2 where session_id = $1`, [
        id,
        text,
      ]);
    });

  beforeAll(async () => {
    ({ url: schemaUrl, schema } = freshSchemaUrl(url));
    const store = await PostgresSessionStore.connect({ url: schemaUrl });
    const writer = createHarness({
      providers: [new ScriptedProvider({ responses: longResponses(40, 4) })],
      tools: [readFileTool()],
      store,
      defaultModel: { provider: 'scripted', model: 'scripted' },
    });
    const agent = await writer.createAgent({ id });
    for (let turn = 0; turn < 40; turn++) {
      agent.followup(`look ${turn}`);
      await agent.whenIdle();
    }
    await writer.dispose();
    await store.close();
  });

  afterAll(async () => {
    await dropSchema(url, schema);
  });

  it('a cold open gives the pages of the whole fold', async () => {
    const open = await coldOpen();
    expect(open.pages.length).toBeGreaterThan(3);
    expectWholeFold(open);
  });

  it('folds on from the carry saved in the snapshot row: what the carry says reaches the page', async () => {
    const original = await snapshotText();
    try {
      // The same snapshot with todos put into its carries: only a fold that starts from a saved carry
      // (the page's carry, with no todo event in the log) can answer them.
      const changed = decodeSessionSnapshot(original, id)!;
      const saved = changed.scans[transcriptCarriesScan]!.state as { carries: TranscriptCarry[] };
      expect(saved.carries.length).toBeGreaterThan(0);
      const todos = [{ content: 'from the saved carry', status: 'pending' as const }];
      saved.carries = saved.carries.map((carry) => ({ ...carry, todos }));
      await writeSnapshotText(encodeSessionSnapshot(changed));
      const [first] = (await coldOpen()).pages;
      expect(first!.start).toBeGreaterThan(saved.carries[0]!.seq);
      expect(first!.carry.todos).toEqual(todos);
      // A snapshot row that no longer matches the rows brings no carry: the fold starts at seq 0 again.
      changed.sha256 = '0'.repeat(64);
      await writeSnapshotText(encodeSessionSnapshot(changed));
      expectWholeFold(await coldOpen());
    } finally {
      await writeSnapshotText(original);
    }
  });
});
