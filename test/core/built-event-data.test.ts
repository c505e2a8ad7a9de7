import { describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/index.ts';
import { createHarness } from '../../src/index.ts';
import {
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
