import { describe, expect, it } from 'vitest';
import type { CompactionOptions, LlmRequest } from '../../../src/index.ts';
import { estimateEnvelopeTokens, estimateMessagesTokens } from '../../../src/internal.ts';
import type { ScriptedResponse } from '../../../src/testing/index.ts';
import {
  bigReadTool,
  compactionFixture,
  filler,
  overflow,
  pairingIntact,
  run,
  textOf,
  typesFrom,
} from './support.ts';

/** A model that reads `calls` files one step at a time, then answers; summary calls get a short summary. */
function readingModel(calls: number, last: ScriptedResponse = { text: 'All files read.' }) {
  let turnCalls = 0;
  return (request: LlmRequest): ScriptedResponse => {
    if (request.purpose === 'compaction') return { text: 'Read files so far; each was a log of x.' };
    turnCalls++;
    if (turnCalls <= calls) {
      return {
        toolCalls: [{ id: `c${turnCalls}`, name: 'read_file', arguments: { path: `f${turnCalls}.log` } }],
      };
    }
    return last;
  };
}

describe('pressure compaction at agent/pre-step', () => {
  it('compacts between the steps of one long tool-using turn, never separating a call from its result', async () => {
    const f = await compactionFixture({
      contextWindow: 4_000,
      tools: [bigReadTool(() => 2_000)],
      fallback: readingModel(12),
    });
    await run(f.agent, 'Read the twelve logs one by one.');
    const events = f.agent.session.events;
    const types = typesFrom(f.agent);
    expect(f.agent.session.eventsOfType('turn/start')).toHaveLength(1);
    expect(f.agent.session.eventsOfType('turn/end')[0]!.data.reason).toEqual({ kind: 'completed' });
    expect(types).not.toContain('request/failed');

    const starts = f.agent.session.eventsOfType('compaction/start');
    expect(starts.length).toBe(2);
    for (const start of starts) {
      expect(start.data).toMatchObject({ turn: 1, trigger: 'pressure' });
      // Between a closed step and the next step of the same turn.
      const before = events
        .slice(0, start.seq)
        .filter((event) => event.type !== 'assistant/chunk')
        .at(-1)!;
      expect(before.type).toBe('step/end');
      const after = events
        .slice(start.seq + 1)
        .filter((event) => event.type !== 'assistant/chunk')
        .slice(0, 4)
        .map((event) => event.type);
      expect(after).toEqual(['compaction/summary', 'user/message', 'compaction/end', 'step/start']);
    }
    expect(f.agent.session.eventsOfType('compaction/end').every((end) => end.data.error === undefined)).toBe(
      true,
    );

    const turnRequests = f.model.requests.filter((request) => request.purpose === 'turn');
    const summaryRequests = f.model.requests.filter((request) => request.purpose === 'compaction');
    expect(turnRequests).toHaveLength(13);
    expect(summaryRequests).toHaveLength(2);
    // Pairing is intact in every request on both sides of every cut, and in what the summarizer saw.
    for (const request of [
      ...turnRequests,
      ...summaryRequests.map((r) => ({ ...r, messages: r.messages.slice(0, -1) })),
    ]) {
      expect(pairingIntact(request.messages)).toBe(true);
    }
    // The request right after each compaction starts with its checkpoint and keeps a whole call/result tail.
    const compactedRequests = turnRequests.filter((request) =>
      textOf(request.messages[0]!).includes('<compacted-summary>'),
    );
    expect(compactedRequests.length).toBeGreaterThan(0);
    const firstCompacted = compactedRequests[0]!;
    expect(firstCompacted.messages[0]!.source).toMatchObject({ kind: 'plugin', plugin: 'compaction' });
    expect(firstCompacted.messages[1]!.role).toBe('assistant');
    // The second summary re-summarizes the first checkpoint together with the steps after it.
    expect(textOf(summaryRequests[1]!.messages[0]!)).toContain('<compacted-summary>');
    // Every request went out below the threshold (0.8 of the window) as the meter prices it.
    const priced = turnRequests.map(
      (request) =>
        estimateEnvelopeTokens(request.system, request.tools) + estimateMessagesTokens(request.messages),
    );
    for (const tokens of priced) expect(tokens).toBeLessThan(3_200);
    // Without compaction the last request would have carried all twelve results.
    expect(
      estimateMessagesTokens(f.agent.session.eventsOfType('tool/result').map((e) => e.data.message)),
    ).toBeGreaterThan(3_200);
    expect(f.warnings).toEqual([]);
    await f.harness.dispose();
  });

  it('measures with the provider-reported input: high reported usage triggers compaction the estimate would not', async () => {
    const f = await compactionFixture({
      contextWindow: 4_000,
      tools: [bigReadTool(() => 100)],
      responses: [
        { text: filler('answer one', 200), usage: { inputTokens: 210, outputTokens: 200 } },
        { text: filler('answer two', 200), usage: { inputTokens: 620, outputTokens: 200 } },
        {
          toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a' } }],
          usage: { inputTokens: 3_000, outputTokens: 10, cacheReadTokens: 300 },
        },
        { text: 'Turn one and two were about questions.' },
        { text: 'Done.' },
      ],
    });
    await run(f.agent, filler('question one', 200));
    await run(f.agent, filler('question two', 200));
    expect(f.agent.session.eventsOfType('compaction/start')).toHaveLength(0);
    const from = f.agent.session.length;
    await run(f.agent, 'question three');
    expect(typesFrom(f.agent, from)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'assistant/message',
      'tool/call',
      'tool/result',
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
    // The heuristic alone prices the whole conversation far below the 3200-token threshold.
    const request = f.model.requests[2]!;
    expect(
      estimateEnvelopeTokens(request.system, request.tools) + estimateMessagesTokens(request.messages),
    ).toBeLessThan(1_500);
    // The retained tail (0.16 × 4000 = 640 tokens) reaches back into answer one: only question one is summarized.
    const after = f.model.requests.at(-1)!;
    expect(after.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    expect(f.agent.session.eventsOfType('compaction/summary')[0]!.data.shadowedSeqs).toEqual([
      f.agent.session.eventsOfType('user/message')[0]!.seq,
    ]);
    expect(textOf(after.messages[0]!)).toContain('<compacted-summary>');
    expect(pairingIntact(after.messages)).toBe(true);
    await f.harness.dispose();
  });

  const disabled: [string, CompactionOptions][] = [
    ['auto: false', { auto: false }],
    [
      'a per-model override with auto: false',
      { overrides: [{ provider: 'scripted', model: 'test-model', auto: false }] },
    ],
  ];
  for (const [label, compaction] of disabled) {
    it(`${label}: neither trigger acts`, async () => {
      const f = await compactionFixture({
        contextWindow: 4_000,
        compaction,
        tools: [bigReadTool(() => 2_000)],
        fallback: readingModel(8, { error: overflow }),
      });
      await run(f.agent, 'Read the eight logs one by one.');
      const types = typesFrom(f.agent);
      expect(types.filter((type) => type.startsWith('compaction/'))).toEqual([]);
      expect(f.agent.session.replaceGeneration).toBe(0);
      expect(types.slice(-3)).toEqual(['request/failed', 'step/end', 'turn/end']);
      expect(f.agent.session.eventsOfType('turn/end')[0]!.data.reason).toEqual({
        kind: 'error',
        error: overflow,
      });
      expect(f.model.requests.map((request) => request.purpose)).toEqual(Array(9).fill('turn'));
      await f.harness.dispose();
    });
  }

  it('uses a configured context window when the adapter does not describe the model, and warns once when nobody knows it', async () => {
    const unknown = await compactionFixture({ tools: [bigReadTool(() => 2_000)], fallback: readingModel(8) });
    await run(unknown.agent, 'Read the eight logs.');
    expect(typesFrom(unknown.agent).filter((type) => type.startsWith('compaction/'))).toEqual([]);
    expect(unknown.warnings.map((warning) => warning.code)).toEqual(['NO_CONTEXT_WINDOW']);
    await unknown.harness.dispose();

    const configured = await compactionFixture({
      compaction: { overrides: [{ provider: 'scripted', contextWindow: 4_000 }] },
      tools: [bigReadTool(() => 2_000)],
      fallback: readingModel(8),
    });
    await run(configured.agent, 'Read the eight logs.');
    expect(
      configured.agent.session.eventsOfType('compaction/start').map((event) => event.data.trigger),
    ).toEqual(['pressure']);
    expect(configured.warnings).toEqual([]);
    await configured.harness.dispose();
  });
});
