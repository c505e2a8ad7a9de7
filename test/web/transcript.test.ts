import { describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import { createHarness } from '../../src/index.ts';
import { ScriptedProvider, deferred } from '../../src/testing/index.ts';
import { Transcript } from '../../web/src/transcript.ts';
import type { LogEvent } from '../../web/src/types.ts';
import { readFileTool } from '../server/support.ts';

// The browser's transcript is a fold of the durable log; these run it over real agent logs, no browser.
function fold(events: readonly AnySessionEvent[]): Transcript {
  const transcript = new Transcript();
  for (const event of events) transcript.apply(event as LogEvent);
  return transcript;
}

describe('transcript fold', () => {
  it('folds the running example into user, assistant, tool card, summary and a completed turn; repeats are dropped', async () => {
    const model = new ScriptedProvider({
      responses: [
        {
          text: 'Reading.',
          toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.md' } }],
          usage: { inputTokens: 10, outputTokens: 2 },
        },
        { reasoning: 'It is short.', text: 'Summary.', usage: { inputTokens: 20, outputTokens: 3 } },
      ],
    });
    const harness = createHarness({ providers: [model], tools: [readFileTool()] });
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
    agent.followup('Summarize a.md');
    await agent.whenIdle();
    const transcript = fold(agent.session.events);
    expect(transcript.items.map((item) => item.kind)).toEqual([
      'turn-start',
      'user',
      'assistant',
      'tool',
      'assistant',
      'turn-end',
    ]);
    expect(transcript.items[3]).toMatchObject({
      kind: 'tool',
      name: 'read_file',
      state: 'done',
      result: { text: 'contents of a.md', isError: false },
    });
    expect(transcript.items[4]).toMatchObject({
      blocks: [
        { type: 'reasoning', text: 'It is short.' },
        { type: 'text', text: 'Summary.' },
      ],
      streaming: false,
    });
    expect(transcript.items[5]).toMatchObject({ kind: 'turn-end', turn: 1, reason: 'completed' });
    expect(transcript.sessionUsage()).toMatchObject({ inputTokens: 30, outputTokens: 5 });

    // Replaying any prefix again (a reconnect that overlaps) changes nothing.
    const again = fold(agent.session.events);
    for (const event of agent.session.events.slice(5)) expect(again.apply(event as LogEvent)).toBe(false);
    expect(JSON.stringify(again.items)).toBe(JSON.stringify(transcript.items));
    await harness.dispose();
  });

  it('shows a stream cut by Stop as interrupted and the turn as aborted; a failed request keeps its code', async () => {
    const streaming = deferred<void>();
    const model = new ScriptedProvider({
      responses: [
        (_request, _call) => {
          streaming.resolve();
          return { text: ['partial ', 'answer'], hang: true };
        },
        { error: { code: 'RATE_LIMIT', message: 'slow down' } },
      ],
    });
    const harness = createHarness({ providers: [model] });
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
    agent.followup('go');
    await streaming.promise;
    await new Promise((resolve) => setTimeout(resolve, 50));
    agent.cancel({ kind: 'user' });
    await agent.whenIdle();
    agent.followup('again');
    await agent.whenIdle();
    const transcript = fold(agent.session.events);
    const kinds = transcript.items.map((item) => item.kind);
    expect(kinds).toEqual([
      'turn-start',
      'user',
      'assistant',
      'cancelled',
      'turn-end',
      'turn-start',
      'user',
      'assistant',
      'request-failed',
      'turn-end',
    ]);
    expect(transcript.items[2]).toMatchObject({
      streaming: false,
      interrupted: true,
      blocks: [{ type: 'text', text: 'partial answer' }],
    });
    expect(transcript.items[3]).toMatchObject({ cause: 'Stopped by you' });
    expect(transcript.items[4]).toMatchObject({ reason: 'aborted' });
    expect(transcript.items[7]).toMatchObject({ failed: true });
    expect(transcript.items[9]).toMatchObject({ reason: 'error', error: { code: 'RATE_LIMIT' } });
    await harness.dispose();
  });
});
