import { describe, expect, it } from 'vitest';
import { createUserMessage, enter, reject } from '../../src/index.ts';
import { dataOf, fixture, types } from './support.ts';

describe('agent/pre-step decides what the model sees', () => {
  it('a listener may rewrite the claimed messages; what it enters is what the model sees', async () => {
    const f = await fixture([{ text: 'ok' }]);
    f.harness.hooks.on('agent/pre-step', async (_payload, next) => {
      const downstream = await next();
      if (downstream.kind !== 'enter') return downstream;
      const note = createUserMessage('[context] the repo uses vitest', {
        kind: 'plugin',
        plugin: 'test',
        form: 'notice',
      });
      return enter([...downstream.messages, note]);
    });
    const prompt = f.agent.followup('what test runner?');
    await f.agent.whenIdle();
    const entered = dataOf<{ id: string }>(f.agent, 'user/message').map((message) => message.id);
    expect(entered[0]).toBe(prompt.id);
    expect(entered).toHaveLength(2);
    expect(f.model.requests[0]!.messages.map((message) => message.id)).toEqual(entered);
  });

  it('reject closes a durable turn with no step (blocked), stops the drain, and keeps pending input', async () => {
    const f = await fixture([{ text: 'never' }]);
    f.harness.hooks.on('agent/pre-step', () => reject());
    f.agent.followup('blocked one');
    const waiting = f.agent.send('waits', 'next-turn', false);
    await f.agent.whenIdle();
    // followup claims synchronously, so the second send is inserted after the claim.
    expect(types(f.agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'agent/inbox/spliced',
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'blocked' } }]);
    expect(f.agent.inbox.list('next-turn')).toEqual([waiting]);
    expect(f.model.requests).toHaveLength(0);
  });

  it('a first enter rewritten empty closes a completed turn with zero steps', async () => {
    const f = await fixture([]);
    f.harness.hooks.on('agent/pre-step', () => enter([]));
    f.agent.followup('dropped');
    await f.agent.whenIdle();
    expect(types(f.agent)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced', 'turn/end']);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('a throwing listener fails the turn with a structured error, is reported, and the agent stays usable', async () => {
    const f = await fixture([{ text: 'recovered' }]);
    const errors: unknown[] = [];
    f.harness.hooks.on('agent/error', ({ error, turn, step }) => {
      errors.push({ error, turn, step });
    });
    let fail = true;
    f.harness.hooks.on('agent/pre-step', async (_payload, next) => {
      if (fail) {
        fail = false;
        throw new Error('listener exploded');
      }
      return next();
    });
    f.agent.followup('first');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'error', error: { message: 'listener exploded', code: 'UNKNOWN' } } },
    ]);
    expect(errors).toMatchObject([{ turn: 1, step: 0 }]);
    expect(f.agent.status).toBe('idle');
    f.agent.followup('second');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end').at(-1)).toEqual({ turn: 2, reason: { kind: 'completed' } });
  });

  it('an invalid decision is a typed turn error', async () => {
    const f = await fixture([]);
    f.harness.hooks.on('agent/pre-step', () => ({ kind: 'maybe' }) as never);
    f.agent.followup('x');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end')).toMatchObject([
      { reason: { kind: 'error', error: { code: 'INVALID_DECISION' } } },
    ]);
  });

  it('runs once per proposed step: tool continuations see an empty batch at step 2', async () => {
    const f = await fixture([{ toolCalls: [{ id: 'c1', name: 'noop' }] }, { text: 'done' }], {
      tools: [
        { name: 'noop', description: 'no-op', parameters: { type: 'object' }, execute: () => 'ok' } as never,
      ],
    });
    const seen: string[] = [];
    f.harness.hooks.on('agent/pre-step', async (payload, next) => {
      seen.push(`${payload.turn}.${payload.step}:${payload.messages.length}`);
      return next();
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(seen).toEqual(['1.1:1', '1.2:0']);
  });
});
