import { describe, expect, it } from 'vitest';
import type { Agent, CompactionSummaryData } from '../../../src/internal.ts';
import { ScriptedProvider, eventsOf, waitForEvent } from '../../../src/testing/index.ts';
import type { CompactionFixture } from './support.ts';
import { bigReadTool, compactionFixture, filler, overflow, run, textOf, typesFrom } from './support.ts';

const summaryText = 'The user asked three questions about the parser; all were answered.';

/** Three plain turns of about 400 tokens each, on a route whose window never triggers pressure. */
async function longSession(f: CompactionFixture): Promise<void> {
  for (const label of ['one', 'two', 'three']) await run(f.agent, filler(`question ${label}`, 200));
}

function turnResponses(): { text: string }[] {
  return ['one', 'two', 'three'].map((label) => ({ text: filler(`answer ${label}`, 200) }));
}

function dataAt<T>(agent: Agent, from: number, type: string): T[] {
  return eventsOf<T>(agent.session.events.slice(from), type);
}

describe('overflow recovery at agent/request-error', () => {
  it('compacts once and retries once on the first request of a resumed long session; the retry carries the summary', async () => {
    const f = await compactionFixture({
      contextWindow: 1_000_000,
      responses: [
        ...turnResponses(),
        { error: overflow },
        { text: summaryText },
        { text: 'Here is the answer.' },
      ],
    });
    await longSession(f);
    const id = f.agent.id;
    const historyBefore = f.agent.session.deriveMessages();
    await f.agent.dispose();
    const agent = await f.harness.resumeAgent(id, { provider: 'scripted', model: 'test-model' });
    const from = agent.session.length;
    const callsBefore = f.model.requests.length;
    const prompt = agent.followup('And the fourth question?');
    await agent.whenIdle();

    expect(typesFrom(agent, from)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/failed',
      'step/end',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(dataAt(agent, from, 'step/start')).toEqual([
      { turn: 4, step: 1 },
      { turn: 4, step: 2 },
    ]);
    expect(dataAt(agent, from, 'request/failed')).toEqual([{ turn: 4, step: 1, failure: overflow }]);
    expect(dataAt(agent, from, 'turn/end')).toEqual([{ turn: 4, reason: { kind: 'completed' } }]);
    const [start] = dataAt<{ compactionId: string; turn: number; trigger: string }>(
      agent,
      from,
      'compaction/start',
    );
    expect(start).toMatchObject({ turn: 4, trigger: 'overflow' });
    expect(dataAt(agent, from, 'compaction/end')).toEqual([{ compactionId: start!.compactionId, turn: 4 }]);

    // Three model calls: the failed request, the summary, the retry.
    const calls = f.model.requests.slice(callsBefore);
    expect(calls.map((request) => request.purpose)).toEqual(['turn', 'compaction', 'turn']);
    const [failed, summaryCall, retried] = calls;
    expect(failed!.messages).toEqual([...historyBefore, prompt]);
    // The summary call sees the conversation's system prompt, the range, and the fixed instruction.
    expect(summaryCall!.system).toBe(failed!.system);
    expect(summaryCall!.messages.slice(0, -1)).toEqual(historyBefore);
    expect(textOf(summaryCall!.messages.at(-1)!)).toContain('summary');
    expect(summaryCall!.maxTokens).toBe(8192);

    // The retried request carries the summary instead of the range, then the prompt.
    expect(retried!.messages).toHaveLength(2);
    const checkpoint = retried!.messages[0]!;
    expect(checkpoint.role).toBe('user');
    expect(checkpoint.source).toEqual({
      kind: 'plugin',
      plugin: 'compaction',
      compactionId: start!.compactionId,
    });
    expect(textOf(checkpoint)).toContain(`<compacted-summary>\n${summaryText}\n</compacted-summary>`);
    expect(retried!.messages[1]).toEqual(prompt);

    // The durable records: the summary names exactly the shadowed nodes, and the checkpoint replaces them.
    const [summary] = dataAt<CompactionSummaryData>(agent, from, 'compaction/summary');
    const shadowed = agent.session.events
      .filter((event) => event.surfaceOp === 'append' && event.seq < from)
      .map((event) => event.seq);
    expect(summary).toMatchObject({
      summary: summaryText,
      shadowedSeqs: shadowed,
      provider: 'scripted',
      model: 'test-model',
    });
    const replacing = agent.session.events.find(
      (event) => event.type === 'user/message' && typeof event.surfaceOp === 'object',
    )!;
    expect(replacing.surfaceOp).toEqual({ op: 'replace', start: shadowed[0], end: shadowed.at(-1) });
    expect(replacing.sourceEventSeqs!.slice(2)).toEqual(shadowed);
    expect(agent.session.replaceGeneration).toBe(1);
    // The original events stay in the log.
    expect(agent.session.events.filter((event) => event.type === 'assistant/message')).toHaveLength(4);
    await f.harness.dispose();
  });

  it("writes the summary on the configured summarization route, capped by that model's output limit", async () => {
    const writer = new ScriptedProvider({
      provider: 'writer',
      responses: [{ text: summaryText, usage: { inputTokens: 1_300, outputTokens: 20 } }],
      models: { small: { maxOutputTokens: 1_024 } },
    });
    const f = await compactionFixture({
      contextWindow: 1_000_000,
      providers: [writer],
      compaction: { summarizer: { provider: 'writer', model: 'small' } },
      responses: [...turnResponses(), { error: overflow }, { text: 'Answered.' }],
    });
    await longSession(f);
    await run(f.agent, 'one more');
    expect(f.agent.session.eventsOfType('turn/end').at(-1)!.data.reason).toEqual({ kind: 'completed' });
    expect(writer.requests).toHaveLength(1);
    expect(writer.requests[0]).toMatchObject({
      provider: 'writer',
      model: 'small',
      maxTokens: 1_024,
      purpose: 'compaction',
    });
    expect(f.model.requests.map((request) => request.purpose)).toEqual([
      'turn',
      'turn',
      'turn',
      'turn',
      'turn',
    ]);
    expect(f.agent.session.eventsOfType('compaction/summary')[0]!.data).toMatchObject({
      provider: 'writer',
      model: 'small',
      maxTokens: 1_024,
      usage: { inputTokens: 1_300, outputTokens: 20 },
    });
    await f.harness.dispose();
  });

  it('leaves the error standing when nothing can be compacted (one huge message): no retry, no further call', async () => {
    const f = await compactionFixture({ contextWindow: 1_000_000, responses: [{ error: overflow }] });
    await run(f.agent, filler('a huge paste', 5_000));
    expect(typesFrom(f.agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'request/failed',
      'step/end',
      'turn/end',
    ]);
    expect(f.agent.session.eventsOfType('turn/end')[0]!.data.reason).toEqual({
      kind: 'error',
      error: overflow,
    });
    expect(f.model.requests).toHaveLength(1);
    expect(f.agent.session.replaceGeneration).toBe(0);
    await f.harness.dispose();
  });

  it('lets a second overflow right after a successful recovery stand (no second loop)', async () => {
    const f = await compactionFixture({
      contextWindow: 1_000_000,
      responses: [...turnResponses(), { error: overflow }, { text: summaryText }, { error: overflow }],
    });
    await longSession(f);
    const from = f.agent.session.length;
    const callsBefore = f.model.requests.length;
    await run(f.agent, 'one more');
    expect(typesFrom(f.agent, from)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/failed',
      'step/end',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'step/start',
      'request/failed',
      'step/end',
      'turn/end',
    ]);
    expect(dataAt(f.agent, from, 'turn/end')).toEqual([
      { turn: 4, reason: { kind: 'error', error: overflow } },
    ]);
    expect(f.model.requests.slice(callsBefore).map((request) => request.purpose)).toEqual([
      'turn',
      'compaction',
      'turn',
    ]);
    await f.harness.dispose();
  });

  it('counts recoveries per failure chain: a success in between allows another recovery in the same turn', async () => {
    const f = await compactionFixture({
      contextWindow: 1_000_000,
      tools: [bigReadTool(() => 40_000)],
      responses: [
        ...turnResponses(),
        { error: overflow },
        { text: summaryText },
        { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'big.log' } }] },
        { error: overflow },
        { text: 'Summary of the earlier summary and the fourth question.' },
        { text: 'Answered after two recoveries.' },
      ],
    });
    await longSession(f);
    const from = f.agent.session.length;
    await run(f.agent, filler('question four', 200));
    expect(typesFrom(f.agent, from)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/failed',
      'step/end',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'step/start',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'request/failed',
      'step/end',
      'compaction/start',
      'compaction/prune',
      'tool/result',
      'compaction/end',
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(dataAt(f.agent, from, 'turn/end')).toEqual([{ turn: 4, reason: { kind: 'completed' } }]);
    expect(f.agent.session.replaceGeneration).toBe(3);
    const last = f.model.requests.at(-1)!;
    expect(last.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(textOf(last.messages[0]!)).toContain('Summary of the earlier summary');
    await f.harness.dispose();
  });

  it('retries when pruning alone advanced the replacement generation', async () => {
    const f = await compactionFixture({
      contextWindow: 1_000_000,
      tools: [bigReadTool(() => 40_000)],
      responses: [
        { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'big.log' } }] },
        { error: overflow },
        { text: 'The log is mostly noise.' },
      ],
    });
    await run(f.agent, 'read big.log');
    expect(typesFrom(f.agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'request/failed',
      'step/end',
      'compaction/start',
      'compaction/prune',
      'tool/result',
      'compaction/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(f.agent.session.eventsOfType('turn/end')[0]!.data.reason).toEqual({ kind: 'completed' });
    expect(f.agent.session.eventsOfType('step/start').map((event) => event.data.step)).toEqual([1, 2, 3]);
    expect(f.model.requests.map((request) => request.purpose)).toEqual(['turn', 'turn', 'turn']);
    const [original, pruned] = f.agent.session.eventsOfType('tool/result');
    expect(pruned!.surfaceOp).toEqual({ op: 'replace', start: original!.seq, end: original!.seq });
    expect(pruned!.sourceEventSeqs).toEqual([original!.seq]);
    const resultBlock = pruned!.data.message.content[0]!;
    expect(resultBlock.type).toBe('tool-result');
    const full = 'big.log:'.padEnd(40_000, 'x');
    const removed = 40_000 - 4096 - 1024;
    expect((resultBlock as { content: unknown[] }).content).toEqual([
      {
        type: 'text',
        text: `${full.slice(0, 4096)}\n\n[… ${removed} characters of this tool result were removed to save context …]\n\n${full.slice(-1024)}`,
      },
    ]);
    const [prune] = f.agent.session.eventsOfType('compaction/prune');
    expect(prune!.data).toMatchObject({
      shadowedRange: { start: original!.seq, end: original!.seq },
      shadowedSeqs: [original!.seq],
      removedChars: removed,
    });
    expect(prune!.data.shadowedTokenCount).toBeGreaterThan(10_000);
    expect(prune!.data.prunedTokenCount).toBeLessThan(1_500);
    // The retry sees the pruned result; the original stays in the log.
    const retried = f.model.requests[2]!;
    expect(retried.messages[2]).toEqual(pruned!.data.message);
    expect(JSON.stringify(original!.data).length).toBeGreaterThan(40_000);
    await f.harness.dispose();
  });

  it('records compaction/end { error } when the summary call fails, leaves the surface alone, and lets the original error stand', async () => {
    const serverDown = { code: 'SERVER', message: 'upstream unavailable', status: 503 };
    const f = await compactionFixture({
      contextWindow: 1_000_000,
      responses: [...turnResponses(), { error: overflow }, { error: serverDown }],
    });
    await longSession(f);
    const from = f.agent.session.length;
    const surfaceBefore = [...f.agent.session.surfaceNodes];
    await run(f.agent, 'one more');
    expect(typesFrom(f.agent, from)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/failed',
      'step/end',
      'compaction/start',
      'compaction/end',
      'turn/end',
    ]);
    const [start] = dataAt<{ compactionId: string }>(f.agent, from, 'compaction/start');
    expect(dataAt(f.agent, from, 'compaction/end')).toEqual([
      {
        compactionId: start!.compactionId,
        turn: 4,
        error: { code: 'SERVER', message: 'upstream unavailable' },
      },
    ]);
    expect(dataAt(f.agent, from, 'turn/end')).toEqual([
      { turn: 4, reason: { kind: 'error', error: overflow } },
    ]);
    expect(f.agent.session.replaceGeneration).toBe(0);
    // The surface only gained the new prompt.
    expect(f.agent.session.surfaceNodes.slice(0, -1)).toEqual(surfaceBefore);
    expect(f.warnings.map((warning) => warning.code)).toEqual(['SERVER']);
    await f.harness.dispose();
  });

  it('Stop during summarization: the summary is aborted, no retry, the surface is unchanged', async () => {
    const f = await compactionFixture({
      contextWindow: 1_000_000,
      responses: [...turnResponses(), { error: overflow }, { text: 'partial', hang: true }],
    });
    await longSession(f);
    const from = f.agent.session.length;
    const surfaceBefore = [...f.agent.session.surfaceNodes];
    f.agent.followup('one more');
    await waitForEvent(f.agent.session, (event) => event.type === 'compaction/start', 20_000);
    f.agent.cancel({ kind: 'user' });
    await f.agent.whenIdle();
    expect(typesFrom(f.agent, from)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/failed',
      'step/end',
      'compaction/start',
      'agent/cancelled',
      'compaction/end',
      'turn/end',
    ]);
    const [start] = dataAt<{ compactionId: string }>(f.agent, from, 'compaction/start');
    expect(dataAt(f.agent, from, 'compaction/end')).toEqual([
      {
        compactionId: start!.compactionId,
        turn: 4,
        error: { code: 'ABORTED', message: 'compaction aborted' },
      },
    ]);
    expect(dataAt(f.agent, from, 'turn/end')).toEqual([{ turn: 4, reason: { kind: 'aborted' } }]);
    expect(f.agent.session.replaceGeneration).toBe(0);
    expect(f.agent.session.surfaceNodes.slice(0, -1)).toEqual(surfaceBefore);
    expect(f.warnings).toEqual([]);
    await f.harness.dispose();
  });
});
