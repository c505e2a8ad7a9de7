import { describe, expect, it } from 'vitest';
import { compactDuringMaintenance, compactSession } from '../../../src/internal.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';
import { compactionFixture, filler, run, textOf, typesFrom } from './support.ts';

const answers = ['one', 'two', 'three'].map((label) => ({ text: filler(`answer ${label}`, 200) }));

async function threeTurns() {
  const f = await compactionFixture({
    contextWindow: 4_000,
    responses: [...answers, { text: 'Summary of question one and its answer.' }, { text: 'Fourth answer.' }],
  });
  for (const label of ['one', 'two', 'three']) await run(f.agent, filler(`question ${label}`, 200));
  return f;
}

describe('manual compaction (/compact)', () => {
  it('runs as maintenance outside any turn; a prompt sent meanwhile waits behind it and sees the summary', async () => {
    const f = await threeTurns();
    const from = f.agent.session.length;
    const firstQuestionSeq = f.agent.session.surfaceNodes[0]!;
    const compaction = compactSession(f.harness, f.agent, { commandId: 'cmd-1' });
    expect(f.agent.status).toBe('idle');
    const prompt = f.agent.followup('And the fourth question?');
    // The prompt is latched, not started: no turn opens while the summary is written.
    expect(f.agent.session.openTurn).toBeUndefined();
    const result = await compaction;
    await f.agent.whenIdle();

    expect(result).toMatchObject({ compacted: true });
    expect(typesFrom(f.agent, from)).toEqual([
      'compaction/start',
      'agent/inbox/spliced',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const [start] = f.agent.session.eventsOfType('compaction/start');
    expect(start!.data).toEqual({
      compactionId: result.compacted ? result.compactionId : '',
      turn: null,
      trigger: 'manual',
      sourceCommandId: 'cmd-1',
    });
    expect(f.agent.session.eventsOfType('compaction/end')[0]!.data).toEqual({
      compactionId: start!.data.compactionId,
      turn: null,
      sourceCommandId: 'cmd-1',
    });
    // The retained tail (0.16 of 4000 tokens) keeps turns two and three; turn one became the summary.
    const summary = f.agent.session.eventsOfType('compaction/summary')[0]!.data;
    expect(summary.shadowedRange.start).toBe(firstQuestionSeq);
    expect(summary.shadowedSeqs).toHaveLength(2);
    const request = f.model.requests.at(-1)!;
    expect(request.purpose).toBe('turn');
    expect(textOf(request.messages[0]!)).toContain('Summary of question one and its answer.');
    expect(request.messages).toHaveLength(6);
    expect(request.messages.at(-1)).toEqual(prompt);
    await f.harness.dispose();
  });

  it('runs inside a maintenance slot the caller already holds, with a summarizer route named for the run', async () => {
    const writer = new ScriptedProvider({
      provider: 'writer',
      responses: [{ text: 'Question one, answered.' }],
    });
    const f = await compactionFixture({ contextWindow: 4_000, providers: [writer], responses: answers });
    for (const label of ['one', 'two', 'three']) await run(f.agent, filler(`question ${label}`, 200));
    const result = await f.agent.runMaintenance((signal) =>
      compactDuringMaintenance(f.harness, f.agent, signal, {
        summarizer: { provider: 'writer', model: 'w1' },
      }),
    );
    expect(result).toMatchObject({ compacted: true });
    expect(writer.requests.map((request) => [request.provider, request.model, request.purpose])).toEqual([
      ['writer', 'w1', 'compaction'],
    ]);
    expect(f.agent.session.eventsOfType('compaction/summary')[0]!.data).toMatchObject({
      provider: 'writer',
      model: 'w1',
    });
    await f.harness.dispose();
  });

  it('on a resumed agent given another route, measures and summarizes with that route', async () => {
    const writer = new ScriptedProvider({
      provider: 'writer',
      responses: [{ text: 'Question one, answered.' }],
      models: { w2: { contextWindow: 4_000 } },
    });
    const f = await compactionFixture({ contextWindow: 1_000_000, providers: [writer], responses: answers });
    for (const label of ['one', 'two', 'three']) await run(f.agent, filler(`question ${label}`, 200));
    const id = f.agent.id;
    await f.agent.dispose();
    const resumed = await f.harness.resumeAgent(id, { provider: 'writer', model: 'w2' });
    // The 1M-token window of the logged route would keep everything; w2's 4000-token window does not.
    await expect(compactSession(f.harness, resumed)).resolves.toMatchObject({ compacted: true });
    expect(writer.requests.map((request) => [request.model, request.purpose])).toEqual([
      ['w2', 'compaction'],
    ]);
    await f.harness.dispose();
  });

  it('refuses while the agent is running, and reports when there is nothing to compact', async () => {
    const f = await compactionFixture({ contextWindow: 4_000, responses: [{ text: 'short' }] });
    f.agent.followup('hello');
    await expect(compactSession(f.harness, f.agent)).rejects.toMatchObject({ code: 'AGENT_BUSY' });
    await f.agent.whenIdle();
    const length = f.agent.session.length;
    await expect(compactSession(f.harness, f.agent)).resolves.toEqual({
      compacted: false,
      reason: 'nothing-to-compact',
    });
    expect(f.agent.session.length).toBe(length);
    await f.harness.dispose();
  });

  it('records a failed manual summary and rejects with its code, leaving the surface untouched', async () => {
    const f = await compactionFixture({
      contextWindow: 4_000,
      responses: [...answers, { text: '' }],
    });
    for (const label of ['one', 'two', 'three']) await run(f.agent, filler(`question ${label}`, 200));
    const surface = [...f.agent.session.surfaceNodes];
    await expect(compactSession(f.harness, f.agent)).rejects.toMatchObject({ code: 'SUMMARY_EMPTY' });
    expect(f.agent.session.eventsOfType('compaction/end').map((event) => event.data.error?.code)).toEqual([
      'SUMMARY_EMPTY',
    ]);
    expect(f.agent.session.surfaceNodes).toEqual(surface);
    await f.harness.dispose();
  });
});
