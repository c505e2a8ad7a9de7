import { describe, expect, it } from 'vitest';
import type { AnySessionEvent, StreamChunk } from '../../src/index.ts';
import { createHarness } from '../../src/index.ts';
import {
  HookBus,
  Session,
  appendBuilt,
  appendChunk,
  assistantMessageData,
  createAssistantMessage,
  snapshotJson,
} from '../../src/internal.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';

// The loop commits its own step boundaries, chunks and tool calls through typed constructors that skip
// the snapshot's walk over data it built. What a provider supplies must still be validated and copied.
describe('events the loop builds itself', () => {
  it('still reject a chunk that is not lossless JSON, naming the spot, and log nothing of it', async () => {
    const chunks: StreamChunk[] = [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'hi' },
      { type: 'usage', usage: { inputTokens: Number.NaN, outputTokens: 1 } },
      { type: 'finish', reason: { kind: 'stop' } },
    ];
    const harness = createHarness({ providers: [new ScriptedProvider({ responses: [{ chunks }] })] });
    const errors: unknown[] = [];
    harness.hooks.on('agent/error', ({ error }) => {
      errors.push(error);
    });
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
    agent.followup('go');
    await agent.whenIdle();
    const events = agent.session.events;
    expect(events.map((event) => event.type).slice(-5)).toEqual([
      'request/context',
      'assistant/chunk',
      'assistant/chunk',
      'step/end',
      'turn/end',
    ]);
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'INVALID_JSON_DATA',
        message: 'not lossless JSON at assistant/chunk.data.chunk.usage.inputTokens: non-finite number',
      }),
    ]);
    await harness.dispose();
  });

  it('copy the provider chunk (it stays the provider’s, unfrozen) and log a frozen equal one', async () => {
    const delta: StreamChunk = { type: 'text-delta', index: 0, text: 'hello' };
    const chunks: StreamChunk[] = [
      { type: 'block-start', index: 0, blockType: 'text' },
      delta,
      { type: 'block-end', index: 0, block: { type: 'text', text: 'hello' } },
      { type: 'finish', reason: { kind: 'stop' } },
    ];
    const harness = createHarness({ providers: [new ScriptedProvider({ responses: [{ chunks }] })] });
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
    agent.followup('go');
    await agent.whenIdle();
    expect(Object.isFrozen(delta)).toBe(false);
    const logged = agent.session.eventsOfType('assistant/chunk').map((event) => event.data);
    expect(logged.map((data) => data.chunk)).toEqual(chunks);
    for (const data of logged) {
      expect(Object.isFrozen(data)).toBe(true);
      expect(Object.isFrozen(data.chunk)).toBe(true);
      expect(data.chunk).not.toBe(delta);
    }
    const steps = agent.session.eventsOfType('step/start').map((event) => event.data);
    expect(steps).toEqual([{ turn: 1, step: 1 }]);
    expect(Object.isFrozen(steps[0])).toBe(true);
    await harness.dispose();
  });
});

describe('a chunk the loop appends', () => {
  const header = { version: 0 as const, id: 's1', createdAt: 0 };
  const delta: StreamChunk = { type: 'text-delta', index: 0, text: 'a' };

  /** Two sessions in the same open step, each publishing to a hook bus and writing to a recorder. */
  function pair(): { session: Session; published: AnySessionEvent[]; written: AnySessionEvent[] }[] {
    return [0, 1].map(() => {
      const hooks = new HookBus();
      const published: AnySessionEvent[] = [];
      const written: AnySessionEvent[] = [];
      const session = new Session({
        header,
        hooks,
        persistence: {
          write: (event) => {
            written.push(event);
          },
          checkpoint: () => Promise.resolve(),
        },
      });
      hooks.on('session/event', ({ event }) => {
        published.push(event);
        // An observer's own append commits at once and is published after this event.
        if (event.type === 'assistant/chunk' && event.seq === 2)
          session.append('request/context', { provider: 'p', model: 'm' });
      });
      session.append('turn/start', { turn: 1 });
      session.append('step/start', { turn: 1, step: 1 });
      return { session, published, written };
    });
  }

  it('commits, writes and publishes what append does, in the same order', () => {
    const [viaChunk, viaAppend] = pair();
    const chunks: StreamChunk[] = [
      delta,
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } },
      { type: 'finish', reason: { kind: 'stop' } },
    ];
    for (const chunk of chunks) {
      const made = appendChunk(viaChunk!.session, 1, 1, chunk);
      const plain = viaAppend!.session.append('assistant/chunk', { turn: 1, step: 1, chunk });
      expect({ ...made, time: 0 }).toStrictEqual({ ...plain, time: 0 });
      expect(Object.isFrozen(made)).toBe(true);
    }
    const strip = (events: AnySessionEvent[]): unknown => events.map(({ time: _time, ...rest }) => rest);
    expect(strip(viaChunk!.published)).toStrictEqual(strip(viaAppend!.published));
    expect(strip(viaChunk!.written)).toStrictEqual(strip(viaAppend!.written));
    expect(viaChunk!.published.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(viaChunk!.written.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('refuses what append refuses, logging nothing: outside the open step, on a closed session', () => {
    const session = pair()[0]!.session;
    expect(() => appendChunk(session, 1, 2, delta)).toThrow(
      expect.objectContaining({ code: 'ENCLOSURE_VIOLATION' }),
    );
    expect(() => appendChunk(session, 2, 1, delta)).toThrow(
      expect.objectContaining({ code: 'ENCLOSURE_VIOLATION' }),
    );
    session.close();
    expect(() => appendChunk(session, 1, 1, delta)).toThrow(
      expect.objectContaining({ code: 'SESSION_CLOSED' }),
    );
    expect(session.length).toBe(2);
  });
});

describe('source lists the loop builds itself', () => {
  const model = snapshotJson({ kind: 'model' as const, provider: 'p', model: 'm' });

  function openStep(): Session {
    const session = new Session({ header: { version: 0, id: 's1', createdAt: 0 } });
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    appendChunk(session, 1, 1, { type: 'text-delta', index: 0, text: 'a' });
    return session;
  }

  it('commit a frozen source list as it is, equal to what append would have copied', () => {
    const built = openStep();
    const plain = openStep();
    const message = createAssistantMessage([{ type: 'text', text: 'a' }], model, 'id-1');
    const sources = Object.freeze([2]);
    const event = appendBuilt(built, 'assistant/message', assistantMessageData(1, 1, message, undefined)!, {
      surfaceOp: 'append',
      sourceEventSeqs: sources,
      adopt: true,
    });
    expect(event.sourceEventSeqs).toBe(sources);
    const copied = plain.append(
      'assistant/message',
      { turn: 1, step: 1, message },
      {
        surfaceOp: 'append',
        sourceEventSeqs: [2],
        adopt: true,
      },
    );
    expect({ ...event, time: 0 }).toEqual({ ...copied, time: 0 });
    expect(Object.keys(event)).toEqual(Object.keys(copied));
  });

  it('still has the surface check reject a frozen source list naming a later or a non-integer seq', () => {
    const message = createAssistantMessage([{ type: 'text', text: 'a' }], model, 'id-1');
    for (const bad of [[3], [1.5], [-1]]) {
      const session = openStep();
      expect(() =>
        appendBuilt(session, 'assistant/message', assistantMessageData(1, 1, message, undefined)!, {
          surfaceOp: 'append',
          sourceEventSeqs: Object.freeze(bad),
          adopt: true,
        }),
      ).toThrow(/is not earlier/);
      expect(session.length).toBe(3);
    }
  });
});
