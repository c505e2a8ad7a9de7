import { describe, expect, it } from 'vitest';
import type { StreamChunk } from '../../src/index.ts';
import { createHarness } from '../../src/index.ts';
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
