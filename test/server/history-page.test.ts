import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnySessionEvent, TranscriptCarry } from '../../src/index.ts';
import { DiskSessionStore, Transcript, compactSession, createHarness } from '../../src/index.ts';
import { transcriptCarriesScan } from '../../src/internal.ts';
import {
  decodeSessionSnapshotBytes,
  encodeSessionSnapshotBytes,
} from '../../src/session/stores/session-snapshot.ts';
import type { SessionSnapshot } from '../../src/session/stores/session-snapshot.ts';
import { settledHistory } from '../../src/server/settled-history.ts';
import type { ScriptedTurn } from '../../src/testing/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { writeTurnThenDie } from '../support/dead-writer.ts';
import {
  expectWholeFold,
  historyPricing,
  historyViews,
  longResponses,
  pageThrough,
} from './history-page-support.ts';
import type { HistoryPage } from './history-page-support.ts';
import type { ServerFixture } from './support.ts';
import { readFileTool, serverFixture } from './support.ts';

type Page = HistoryPage;

const views = historyViews;
const turns = 8;
const pricing = historyPricing;

// Each turn: two reads in two steps, then an answer; every response reports usage.
function responses(): ScriptedTurn[] {
  const script: ScriptedTurn[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    for (const step of [1, 2]) {
      script.push({
        toolCalls: [
          { id: `c${turn}-${step}`, name: 'read_file', arguments: { path: `f${turn}-${step}.md` } },
        ],
        usage: { inputTokens: 10 * turn + step, outputTokens: step },
      });
    }
    script.push({ text: [`Answer `, `${turn}.`], usage: { inputTokens: 7, outputTokens: turn } });
  }
  return script;
}

// The Web UI opens a long session from its last turns: a real server over a real stored session.
describe('history pages (GET /api/sessions/:id/events?tail=…)', () => {
  let f: ServerFixture;
  let directory: string;
  let id: string;
  let logged: AnySessionEvent[];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'rein-history-page-'));
    const writer = createHarness({
      providers: [new ScriptedProvider({ responses: responses() })],
      tools: [readFileTool()],
      store: new DiskSessionStore({ root: directory }),
      defaultModel: { provider: 'scripted', model: 'scripted' },
    });
    const agent = await writer.createAgent();
    id = agent.id;
    for (let turn = 1; turn <= turns; turn++) {
      agent.followup(`prompt ${turn}`);
      await agent.whenIdle();
    }
    await writer.dispose();
    logged = (await new DiskSessionStore({ root: directory }).read(id)).events;
    f = await serverFixture([], { store: new DiskSessionStore({ root: directory }) });
  });

  afterAll(async () => {
    await f.close();
    await rm(directory, { recursive: true, force: true });
  });

  const get = async (query: string): Promise<Page> => {
    const answer = await f.api('GET', `/api/sessions/${id}/events?${query}`);
    expect(answer.status).toBe(200);
    return answer.json as Page;
  };

  it('answers the last turns covering the asked events, cut at a turn boundary, with the carry', async () => {
    const whole = Transcript.of(logged, { views });
    const page = await get('tail=10');
    expect(page.end).toBe(logged.length);
    expect(page.end - page.start).toBeGreaterThanOrEqual(10);
    expect(logged[page.start - 1]!.type).toBe('turn/end');
    // The latest such boundary: no later turn end leaves 10 events after it.
    const later = logged.slice(page.start, page.end - 10).filter((event) => event.type === 'turn/end');
    expect(later).toEqual([]);
    expect(page.events).toEqual(settledHistory(logged.slice(page.start)));
    expect(page.carry).toEqual(
      JSON.parse(JSON.stringify(Transcript.of(logged.slice(0, page.start), { views }).carry())),
    );
    const tail = new Transcript({ views, carry: page.carry });
    for (const event of page.events) tail.apply(event);
    expect(tail.items).toEqual(whole.items.filter((item) => item.seq >= page.start));
    expect(tail.items.slice(0, 2)).toMatchObject([
      { kind: 'turn-start', turn: turns },
      { kind: 'user', text: `prompt ${turns}` },
    ]);
    expect(tail.usage()).toEqual(whole.usage());
    expect(tail.cost(pricing)).toEqual(whole.cost(pricing));
    expect(tail.nextSeq).toBe(logged.length);
  });

  it('pages back with before=<start> to seq 0, and the prepended pages fold like the whole log', async () => {
    const whole = Transcript.of(logged, { views });
    const first = await get('tail=20');
    const transcript = new Transcript({ views, carry: first.carry });
    for (const event of first.events) transcript.apply(event);
    const starts = [first.start];
    let start = first.start;
    while (start > 0) {
      const page = await get(`tail=20&before=${start}`);
      expect(page.end).toBe(start);
      expect(page.start).toBeLessThan(start);
      const earlier = new Transcript({ views, carry: page.carry });
      for (const event of page.events) earlier.apply(event);
      transcript.prepend(earlier);
      start = page.start;
      starts.push(start);
    }
    expect(starts.length).toBeGreaterThan(3);
    expect(transcript.items).toEqual(whole.items);
    expect(transcript.turns).toEqual(whole.turns);
    expect(transcript.cost(pricing, 3)).toEqual(whole.cost(pricing, 3));
  });

  it('starts at seq 0 when the log is shorter than the tail asked for', async () => {
    const page = await get(`tail=${logged.length + 5}`);
    expect(page).toMatchObject({ start: 0, end: logged.length });
    expect(page.carry).toMatchObject({ seq: 0, open: [], unsettled: [], streams: [] });
  });

  it('refuses bad parameters with typed 400 errors, and an unknown session with 404', async () => {
    for (const query of [
      'tail=0',
      'tail=-3',
      'tail=1.5',
      'tail=many',
      'tail=',
      'tail=5&before=-1',
      'tail=5&before=x',
      `tail=5&before=${logged.length + 1}`,
      'before=4',
      'tail=5&from=3',
      'tail=5&settled=1',
    ]) {
      const answer = await f.api('GET', `/api/sessions/${id}/events?${query}`);
      expect({ query, status: answer.status, json: answer.json }).toMatchObject({
        query,
        status: 400,
        json: { error: { code: 'INVALID_HISTORY_PAGE' } },
      });
    }
    const missing = await f.api('GET', `/api/sessions/no-such-session/events?tail=5`);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ error: { code: 'SESSION_NOT_FOUND' } });
  });
});

// Each turn: `steps` reads in as many steps, then an answer.

// A cold open of a long stored session: the store's snapshot saved transcript carries at turn ends, and
// the server folds the page's carry on from the nearest one instead of from seq 0.
describe('history pages of a stored session folded from the saved transcript carries', () => {
  let directory: string;
  const id = 'long-session';
  const snapshotPath = (): string => join(directory, '.snapshots', `${id}.json`);

  const run = async (
    script: ScriptedTurn[],
    count: number,
    resume: boolean,
    compact = false,
  ): Promise<void> => {
    const harness = createHarness({
      providers: [new ScriptedProvider({ responses: script })],
      tools: [readFileTool()],
      store: new DiskSessionStore({ root: directory }),
      defaultModel: { provider: 'scripted', model: 'scripted' },
    });
    const agent = resume ? await harness.resumeAgent(id) : await harness.createAgent({ id });
    if (compact) expect(await compactSession(harness, agent)).toMatchObject({ compacted: true });
    for (let turn = 0; turn < count; turn++) {
      agent.followup(`look ${turn}`);
      await agent.whenIdle();
    }
    await harness.dispose();
  };

  const snapshot = async (): Promise<SessionSnapshot> =>
    decodeSessionSnapshotBytes(await readFile(snapshotPath()), id)!;
  const savedCarries = async (): Promise<TranscriptCarry[]> =>
    ((await snapshot()).scans[transcriptCarriesScan]!.state as { carries: TranscriptCarry[] }).carries;

  // A fresh server (nothing cached) opens the session and pages back to seq 0.
  const coldOpen = async (): Promise<{ first: Page; pages: Page[]; logged: AnySessionEvent[] }> => {
    const server = await serverFixture([], { store: new DiskSessionStore({ root: directory }) });
    try {
      const pages = await pageThrough(server, id, 300);
      const logged = (await new DiskSessionStore({ root: directory }).read(id)).events;
      return { first: pages[0]!, pages, logged };
    } finally {
      await server.close();
    }
  };

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'rein-history-carries-'));
    await run(longResponses(80, 6), 80, false);
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('saves a ladder of carries at turn ends with the snapshot, each the whole fold before it', async () => {
    const logged = (await new DiskSessionStore({ root: directory }).read(id)).events;
    const carries = await savedCarries();
    expect(carries.length).toBeGreaterThan(2);
    expect(carries.at(-1)!.seq).toBe(logged.length);
    for (const carry of carries) {
      if (carry.seq < logged.length) expect(logged[carry.seq - 1]!.type).toBe('turn/end');
      expect(carry).toEqual(
        JSON.parse(JSON.stringify(Transcript.of(logged.slice(0, carry.seq), { views }).carry())),
      );
    }
  });

  it('a cold open gives the pages of the whole fold', async () => {
    const open = await coldOpen();
    expect(open.pages.length).toBeGreaterThan(3);
    expectWholeFold(open);
  });

  it('a cold open folds on from a saved carry: what the carry says reaches the page', async () => {
    const original = await readFile(snapshotPath());
    try {
      // The same snapshot, re-checked, with todos put into its carries: only a fold that starts from a
      // saved carry (the page's carry before any later todo event) can answer them.
      const changed = await snapshot();
      const saved = changed.scans[transcriptCarriesScan]!.state as { carries: TranscriptCarry[] };
      const todos = [{ content: 'from the saved carry', status: 'pending' as const }];
      saved.carries = saved.carries.map((carry) => ({ ...carry, todos }));
      await writeFile(snapshotPath(), encodeSessionSnapshotBytes(changed));
      const { first } = await coldOpen();
      expect(first.start).toBeGreaterThan(saved.carries[0]!.seq);
      expect(first.carry.todos).toEqual(todos);
      expect(first.carry.seq).toBe(first.start);
    } finally {
      await writeFile(snapshotPath(), original);
    }
  });

  it('ignores a damaged snapshot, and carries of another version or other views', async () => {
    const original = await readFile(snapshotPath());
    const withState = async (change: (state: Record<string, unknown>) => void): Promise<void> => {
      const changed = decodeSessionSnapshotBytes(original, id)!;
      const saved = changed.scans[transcriptCarriesScan]!.state as Record<string, unknown>;
      const carries = saved.carries as TranscriptCarry[];
      saved.carries = carries.map((carry) => ({
        ...carry,
        todos: [{ content: 'stale', status: 'pending' }],
      }));
      change(saved);
      await writeFile(snapshotPath(), encodeSessionSnapshotBytes(changed));
    };
    try {
      // One byte of the carries flipped: the snapshot's check fails, the log is read in full.
      const damaged = Buffer.from(original);
      const at = damaged.indexOf('"carries"');
      damaged[at + 20] = damaged[at + 20]! ^ 1;
      await writeFile(snapshotPath(), damaged);
      expectWholeFold(await coldOpen());
      await withState((state) => {
        state.version = 0;
      });
      expectWholeFold(await coldOpen());
      await withState((state) => {
        state.views = ['goals'];
      });
      expectWholeFold(await coldOpen());
      await withState((state) => {
        (state.carries as { activity: unknown }[])[0]!.activity = null;
      });
      expectWholeFold(await coldOpen());
    } finally {
      await writeFile(snapshotPath(), original);
    }
  });

  it('after a crash-repaired turn and a resume, a cold open still gives the whole fold', async () => {
    const before = await savedCarries();
    // A turn is left open in the file by a writer process killed holding the lock.
    writeTurnThenDie(directory, id);
    // Opened with the open turn in its tail (a reader repairs nothing).
    expectWholeFold(await coldOpen());
    // Resumed (the turn is repaired as interrupted) and run on: the next snapshot's carries go on from
    // the ones it resumed with.
    await run(longResponses(10, 6, 81), 10, true);
    const after = await savedCarries();
    expect(after.at(-1)!.seq).toBeGreaterThan(before.at(-1)!.seq);
    const open = await coldOpen();
    const interrupted = open.logged.filter(
      (event) =>
        event.type === 'turn/end' &&
        (event.data as { reason: { kind: string } }).reason.kind === 'interrupted',
    );
    expect(interrupted).toHaveLength(1);
    expectWholeFold(open);
  });

  it('after a compaction and more turns, a cold open still gives the whole fold', async () => {
    const before = await savedCarries();
    await run([{ text: 'Summary: files were read.' }, ...longResponses(10, 6, 91)], 10, true, true);
    expect((await savedCarries()).at(-1)!.seq).toBeGreaterThan(before.at(-1)!.seq);
    const open = await coldOpen();
    expect(open.logged.filter((event) => event.type === 'compaction/summary')).toHaveLength(1);
    expectWholeFold(open);
  });
});
