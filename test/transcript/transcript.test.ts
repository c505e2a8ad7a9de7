import { build } from 'esbuild';
import { join, resolve } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { AnySessionEvent, ContentBlock, DurableEvent, GoalViewState } from '../../src/internal.ts';
import {
  MemorySessionStore,
  createAssistantMessage,
  createToolResultMessage,
  ScriptedProvider,
  Transcript,
  createHarness,
  budgetRecordView,
  defaultRecordViews,
  goalRecordView,
  isDurableEvent,
} from '../../src/internal.ts';
import { transcriptCases } from './transcript-cases.ts';

const root = resolve(import.meta.dirname, '../..');

function fold(events: readonly AnySessionEvent[]): Transcript {
  return Transcript.of(events, { views: defaultRecordViews });
}

describe('the transcript fold over the shared table', () => {
  for (const testCase of transcriptCases) {
    it(testCase.name, async () => {
      const events = await testCase.log();
      // Every log of the table is one a session accepts (the written-out records included).
      const store = new MemorySessionStore();
      await store.release(await store.create({ id: 'table' }, { seed: events }));
      const transcript = fold(events);
      expect(transcript.items.map((item) => item.kind)).toEqual(
        testCase.items.map((item) => item.match.kind),
      );
      testCase.items.forEach((expected, index) => {
        expect(transcript.items[index], `item ${index}`).toMatchObject(expected.match);
      });
      expect(transcript.nextSeq).toBe(events.length === 0 ? 0 : events.at(-1)!.seq + 1);
      expect(transcript.openTurn).toBeUndefined();
      expect(transcript.activity).toEqual({ kind: 'idle' });

      // Incremental: one event at a time folds to the same transcript, and repeats change nothing.
      const live = new Transcript({ views: defaultRecordViews });
      for (const event of events) expect(live.apply(event)).toBeDefined();
      for (const event of events.slice(Math.floor(events.length / 2)))
        expect(live.apply(event)).toBeUndefined();
      expect(JSON.stringify(live.items)).toBe(JSON.stringify(transcript.items));
    });
  }
});

describe('the transcript fold', () => {
  it('streams an answer from chunks: each chunk returns the item it changed, text and reasoning grow', async () => {
    const events = await transcriptCases[0]!.log();
    const transcript = new Transcript();
    const texts: string[] = [];
    for (const event of events) {
      const touched = transcript.apply(event)!;
      if (
        event.type !== 'assistant/chunk' ||
        (event.data as { chunk: { type: string } }).chunk.type === 'usage'
      )
        continue;
      const item = touched[0];
      expect(item?.kind).toBe('assistant');
      if (item?.kind === 'assistant') {
        texts.push(
          item.blocks
            .map((block) => (block.type === 'text' || block.type === 'reasoning' ? block.text : ''))
            .join('|'),
        );
      }
    }
    expect(texts).toContain('It is short.|');
    expect(texts.at(-1)).toBe('It is short.|Summary.');
  });

  it('counts usage per turn and prices it per route; unpriced routes are counted, not guessed', async () => {
    const transcript = fold(await transcriptCases[0]!.log());
    expect(transcript.usage()).toEqual({
      inputTokens: 45,
      outputTokens: 9,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(transcript.turns.map((turn) => turn.routes.length)).toEqual([3]);
    const priced = transcript.cost(() => ({ input: 1, output: 2 }));
    expect(priced).toEqual({ usd: (45 * 1 + 9 * 2) / 1_000_000, unpricedResponses: 0 });
    expect(transcript.cost(() => undefined)).toEqual({ usd: 0, unpricedResponses: 3 });
    expect(transcript.todos).toEqual([{ content: 'Summarize a.md', status: 'in_progress' }]);
  });

  it('keeps module state through record views: the active goal and the paused budget', () => {
    const transcript = new Transcript({ views: defaultRecordViews });
    transcript.apply({
      seq: 0,
      time: 0,
      type: 'goal/set',
      data: { goalId: 'g', objective: 'Do', maxRounds: 2 },
    });
    transcript.apply({ seq: 1, time: 0, type: 'goal/continued', data: { goalId: 'g', round: 1 } });
    expect(transcript.stateOf(goalRecordView)).toEqual<GoalViewState>({
      active: { goalId: 'g', objective: 'Do', maxRounds: 2, rounds: 1 },
    });
    transcript.apply({
      seq: 2,
      time: 0,
      type: 'budget/reached',
      data: { turn: 1, step: 1, limit: 'session.tokens', used: 240, max: 200 },
    });
    expect(transcript.stateOf(budgetRecordView).paused).toEqual({
      seq: 2,
      limit: 'session.tokens',
      used: 240,
      max: 200,
    });
    transcript.apply({ seq: 3, time: 0, type: 'turn/start', data: { turn: 2 } });
    expect(transcript.stateOf(budgetRecordView).paused).toBeUndefined();
    // Without views, module records are plain `event` items and the views' state stays initial.
    const bare = Transcript.of([{ seq: 0, time: 0, type: 'goal/set', data: {} }]);
    expect(bare.items).toMatchObject([{ kind: 'event', type: 'goal/set' }]);
    expect(bare.stateOf(goalRecordView)).toEqual({ active: undefined });
  });

  it('narrows the durable event union on its type', () => {
    const event: AnySessionEvent = { seq: 0, time: 0, type: 'turn/start', data: { turn: 1 } };
    expect(isDurableEvent(event)).toBe(true);
    expect(isDurableEvent({ ...event, type: 'acme/unknown' })).toBe(false);
    if (isDurableEvent(event) && event.type === 'tool/result') {
      expectTypeOf(event.data.message.content).toEqualTypeOf<readonly ContentBlock[]>();
      expectTypeOf(event.data.error).toEqualTypeOf<{ name: string; code: string } | undefined>();
    }
    expectTypeOf<Extract<DurableEvent, { type: 'goal/set' }>['data']['objective']>().toBeString();
    expectTypeOf<Extract<DurableEvent, { type: 'llm/retry' }>['data']['attempt']>().toBeNumber();
  });

  it('names the images of a user message: media type and decoded size, or the URL', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    const harness = createHarness({
      providers: [new ScriptedProvider({ responses: [{ text: 'A dot.' }, { text: 'A dot, in words.' }] })],
    });
    const agent = await harness.createAgent({ provider: 'scripted', model: 'vision' });
    agent.followup([
      { type: 'text', text: 'What are these?' },
      { type: 'image', mediaType: 'image/png', data: png },
      { type: 'image', mediaType: 'image/jpeg', url: 'https://example.test/a.jpg' },
    ]);
    await agent.whenIdle();
    const user = fold(agent.session.events).items.find((item) => item.kind === 'user')!;
    expect(user).toMatchObject({
      text: 'What are these?',
      images: [
        { kind: 'image', mediaType: 'image/png', bytes: 68 },
        { kind: 'image', mediaType: 'image/jpeg', url: 'https://example.test/a.jpg' },
      ],
    });
    agent.followup('and in words?');
    await agent.whenIdle();
    const users = fold(agent.session.events).items.filter((item) => item.kind === 'user');
    expect(users.map((item) => item.images.length)).toEqual([2, 0]);
    await harness.dispose();
  });

  it('bundles for the browser: the fold and the default record views pull in no Node module', async () => {
    const result = await build({
      stdin: {
        contents: "export * from './src/transcript/index.ts'; export * from './src/record-views.ts';",
        resolveDir: root,
        loader: 'ts',
      },
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input !== '<stdin>' && !input.startsWith('src/'))).toEqual([]);
    expect(inputs).toContain(join('src', 'transcript', 'transcript.ts').split('\\').join('/'));
  });
});

describe('a tool card through approval, progress and result', () => {
  it('shows each record on the card and in the activity, and settles the card with its result', () => {
    const source = { kind: 'model' as const, provider: 'scripted', model: 'm' };
    const call = { type: 'tool-call' as const, id: 'call-1', name: 'write_file', arguments: '{"path":"a"}' };
    const data: [string, unknown][] = [
      ['turn/start', { turn: 1 }],
      ['step/start', { turn: 1, step: 1 }],
      ['assistant/message', { turn: 1, step: 1, message: createAssistantMessage([call], source) }],
      [
        'tool/approval-requested',
        {
          requestId: 'r1',
          turn: 1,
          step: 1,
          callId: 'call-1',
          name: 'write_file',
          arguments: call.arguments,
          reason: 'writes a file',
        },
      ],
      ['tool/approval-decided', { requestId: 'r1', callId: 'call-1', decision: 'allow', reason: 'fine' }],
      ['tool/call', { turn: 1, step: 1, callId: 'call-1', name: 'write_file', arguments: call.arguments }],
      ['tool/progress', { turn: 1, step: 1, callId: 'call-1', progress: 1, total: 2, message: 'half' }],
      [
        'tool/result',
        {
          turn: 1,
          step: 1,
          message: createToolResultMessage('call-1', [{ type: 'text', text: 'written' }], false),
          meta: { childSessionId: 'child-7' },
        },
      ],
    ];
    const events = data.map(([type, eventData], seq) => ({ type, seq, time: 1_000 + seq, data: eventData }));
    const transcript = new Transcript();
    const activities: unknown[] = [];
    const states: unknown[] = [];
    for (const event of events) {
      transcript.apply(event);
      activities.push(transcript.activity);
      states.push(transcript.toolCard('call-1')?.state);
    }
    expect(states).toEqual([
      undefined,
      undefined,
      'requested',
      'awaiting-approval',
      'running',
      'running',
      'running',
      'done',
    ]);
    expect(activities.slice(3)).toEqual([
      { kind: 'approval', name: 'write_file' },
      { kind: 'tool', name: 'write_file' },
      { kind: 'tool', name: 'write_file' },
      { kind: 'tool', name: 'write_file', progress: { progress: 1, total: 2, message: 'half' } },
      { kind: 'waiting' },
    ]);
    expect(transcript.toolCard('call-1')).toMatchObject({
      approval: { requestId: 'r1', reason: 'writes a file', decision: 'allow', decisionReason: 'fine' },
      progress: { progress: 1, total: 2, message: 'half' },
      result: { text: 'written', isError: false, meta: { childSessionId: 'child-7' } },
      childSessionId: 'child-7',
    });
    // A denial leaves the card waiting for its result and the agent waiting for the model.
    const denied = new Transcript();
    for (const event of events.slice(0, 4)) denied.apply(event);
    denied.apply({
      type: 'tool/approval-decided',
      seq: 4,
      time: 1_004,
      data: { requestId: 'r1', callId: 'call-1', decision: 'deny' },
    });
    expect(denied.activity).toEqual({ kind: 'waiting' });
    expect(denied.toolCard('call-1')).toMatchObject({ state: 'running', approval: { decision: 'deny' } });
  });
});
