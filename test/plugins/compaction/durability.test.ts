import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskSessionStore, compactSession, compactionPlugin, createHarness } from '../../../src/index.ts';
import { ScriptedProvider, waitForEvent } from '../../../src/testing/index.ts';
import { bigReadTool, compactionFixture, filler, run, typesFrom } from './support.ts';

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

describe('compaction on a disk-backed session', () => {
  it('is durable when manual compaction resolves, and a resumed agent sees the compacted history', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rein-compaction-'));
    directories.push(root);
    const model = new ScriptedProvider({
      responses: [
        ...['one', 'two', 'three'].map((label) => ({ text: filler(`answer ${label}`, 200) })),
        { text: 'Question one was asked and answered.' },
        { text: 'Fourth answer, after a resume.' },
      ],
      models: { 'test-model': { contextWindow: 4_000 } },
    });
    const first = createHarness({
      providers: [model],
      store: new DiskSessionStore({ root }),
      plugins: [compactionPlugin({ onWarning: () => undefined })],
    });
    const agent = await first.createAgent({ provider: 'scripted', model: 'test-model' });
    for (const label of ['one', 'two', 'three']) await run(agent, filler(`question ${label}`, 200));
    const result = await compactSession(first, agent);
    expect(result).toMatchObject({ compacted: true });
    // Flushed before compactSession resolved: the file already holds the whole bracket.
    // Read as another process would (reads never lock): what the file holds now.
    const stored = await new DiskSessionStore({ root }).read(agent.id);
    const types = stored.events.flatMap((event) =>
      event.type.startsWith('compaction/') ? [event.type] : [],
    );
    expect(types).toEqual(['compaction/start', 'compaction/summary', 'compaction/end']);
    const history = agent.session.deriveMessages();
    await first.dispose();

    const second = createHarness({
      providers: [model],
      store: new DiskSessionStore({ root }),
      plugins: [compactionPlugin({ onWarning: () => undefined })],
    });
    const resumed = await second.resumeAgent(agent.id, { provider: 'scripted', model: 'test-model' });
    expect(resumed.session.deriveMessages()).toEqual(history);
    expect(resumed.session.replaceGeneration).toBe(1);
    await run(resumed, 'question four');
    const request = model.requests.at(-1)!;
    expect(request.messages.slice(0, -1)).toEqual(history);
    await second.dispose();
  });
});

describe('Stop during a pressure summary', () => {
  it('aborts the summary and the turn; the surface is unchanged and nothing is warned', async () => {
    let turnCalls = 0;
    const f = await compactionFixture({
      contextWindow: 4_000,
      tools: [bigReadTool(() => 2_000)],
      fallback: (request) => {
        if (request.purpose === 'compaction') return { text: 'partial', hang: true };
        turnCalls++;
        return {
          toolCalls: [{ id: `c${turnCalls}`, name: 'read_file', arguments: { path: `f${turnCalls}` } }],
        };
      },
    });
    f.agent.followup('Read every log.');
    await waitForEvent(f.agent.session, (event) => event.type === 'compaction/start', 20_000);
    const surface = [...f.agent.session.surfaceNodes];
    f.agent.cancel({ kind: 'user' });
    await f.agent.whenIdle();
    expect(typesFrom(f.agent).slice(-5)).toEqual([
      'step/end',
      'compaction/start',
      'agent/cancelled',
      'compaction/end',
      'turn/end',
    ]);
    expect(f.agent.session.eventsOfType('compaction/end')[0]!.data.error).toEqual({
      code: 'ABORTED',
      message: 'compaction aborted',
    });
    expect(f.agent.session.eventsOfType('turn/end')[0]!.data.reason).toEqual({ kind: 'aborted' });
    expect(f.agent.session.surfaceNodes).toEqual(surface);
    expect(f.agent.session.replaceGeneration).toBe(0);
    expect(f.warnings).toEqual([]);
    await f.harness.dispose();
  });
});
