import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnySessionEvent, TranscriptCarry, TranscriptPricing } from '../../src/index.ts';
import { DiskSessionStore, Transcript, createHarness, defaultRecordViews } from '../../src/index.ts';
import { settledHistory } from '../../src/server/settled-history.ts';
import type { ScriptedTurn } from '../../src/testing/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import type { ServerFixture } from './support.ts';
import { readFileTool, serverFixture } from './support.ts';

interface Page {
  events: AnySessionEvent[];
  carry: TranscriptCarry;
  start: number;
  end: number;
}

const views = defaultRecordViews;
const turns = 8;
const pricing = (): TranscriptPricing => ({ input: 0.1, output: 0.3 });

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
