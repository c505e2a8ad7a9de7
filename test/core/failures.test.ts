import { describe, expect, it } from 'vitest';
import { dataOf, fixture, types } from './support.ts';

const serverError = { code: 'SERVER', message: 'upstream 503', status: 503 };

describe('request failure and recovery (section 0 item 1)', () => {
  it('a failed request closes its step first; { kind: retry } opens a new step of the same turn', async () => {
    const f = await fixture([{ text: 'partial', error: serverError }, { text: 'second try worked' }]);
    const seen: { step: number; code: string; previous: number }[] = [];
    f.harness.hooks.on('agent/request-error', (payload) => {
      seen.push({
        step: payload.step,
        code: payload.failure.code,
        previous: payload.previousFailures.length,
      });
      // At this point the failed step is already closed on the log.
      expect(f.agent.session.events.at(-1)!.type).toBe('step/end');
      return { kind: 'retry' };
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(seen).toEqual([{ step: 1, code: 'SERVER', previous: 0 }]);
    expect(types(f.agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'request/failed',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'request/failed')).toEqual([{ turn: 1, step: 1, failure: serverError }]);
    expect(dataOf(f.agent, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    // The failed attempt's chunks stay in the log but never reach the surface.
    expect(f.model.requests[1]!.messages.map((message) => message.role)).toEqual(['user']);
  });

  it('with no handler, the failure becomes the turn error verbatim and is reported', async () => {
    const f = await fixture([{ error: { code: 'AUTH', message: 'bad key', status: 401 } }]);
    const errors: { code?: unknown }[] = [];
    f.harness.hooks.on('agent/error', ({ error }) => {
      errors.push(error as { code?: unknown });
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'error', error: { code: 'AUTH', message: 'bad key', status: 401 } } },
    ]);
    expect(errors.map((error) => error.code)).toEqual(['AUTH']);
    expect(f.agent.status).toBe('idle');
  });

  it('an adapter throw is normalized into an in-band failure offered to agent/request-error', async () => {
    const f = await fixture([
      { text: 'x', throws: { code: 'TRANSPORT', message: 'socket hang up' } },
      { text: 'ok' },
    ]);
    const codes: string[] = [];
    f.harness.hooks.on('agent/request-error', ({ failure }) => {
      codes.push(failure.code);
      return { kind: 'retry' };
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(codes).toEqual(['TRANSPORT']);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('failures before dispatch are turn errors and are not offered to agent/request-error', async () => {
    const f = await fixture([{ text: 'never' }]);
    let offered = false;
    f.harness.hooks.on('agent/request-error', () => {
      offered = true;
      return { kind: 'retry' };
    });
    f.harness.hooks.on('agent/request', () => {
      throw new Error('routing table broken');
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(offered).toBe(false);
    expect(types(f.agent).slice(-3)).toEqual(['user/message', 'step/end', 'turn/end']);
    expect(dataOf(f.agent, 'turn/end')).toMatchObject([
      { reason: { kind: 'error', error: { code: 'UNKNOWN' } } },
    ]);
  });

  it('an unknown provider without an llm/stream listener fails the turn with NO_ADAPTER', async () => {
    const f = await fixture([]);
    const agent = await f.harness.createAgent({ provider: 'nowhere', model: 'x' });
    agent.followup('go');
    await agent.whenIdle();
    expect(dataOf(agent, 'turn/end')).toMatchObject([
      { reason: { kind: 'error', error: { code: 'NO_ADAPTER' } } },
    ]);
  });

  it('an llm/stream listener can serve a route that has no adapter', async () => {
    const f = await fixture([{ text: 'from the scripted route' }]);
    f.harness.hooks.on('llm/stream', async ({ request, signal }, next) => {
      if (request.provider !== 'elsewhere') return next();
      return f.harness.llm.stream({ ...request, provider: 'scripted' }, { signal });
    });
    const agent = await f.harness.createAgent({ provider: 'elsewhere', model: 'x' });
    agent.followup('go');
    await agent.whenIdle();
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('a missing provider/model is a typed turn error', async () => {
    const f = await fixture([]);
    const agent = await f.harness.createAgent({});
    agent.followup('go');
    await agent.whenIdle();
    expect(dataOf(agent, 'turn/end')).toMatchObject([
      { reason: { kind: 'error', error: { code: 'NO_ROUTE' } } },
    ]);
  });
});

describe('max-tokens and turn-stopping', () => {
  it('max-tokens is sticky for the turn and drops the truncated tool calls', async () => {
    const f = await fixture(
      [
        { text: 'long answer', toolCalls: [{ id: 'cut', name: 'noop' }], finish: 'max-tokens' },
        { text: 'continued' },
      ],
      {
        tools: [
          { name: 'noop', description: '', parameters: { type: 'object' }, execute: () => 'ran' } as never,
        ],
      },
    );
    // Steering after the first step forces a second step that completes normally.
    let steered = false;
    f.harness.hooks.on('agent/turn-stopping', () => {
      if (!steered) {
        steered = true;
        f.agent.steer('go on');
      }
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    const messages = dataOf<{ message: { content: { type: string }[] } }>(f.agent, 'assistant/message');
    expect(messages[0]!.message.content.map((block) => block.type)).toEqual(['text']);
    expect(dataOf(f.agent, 'tool/call')).toEqual([]);
    expect(dataOf(f.agent, 'step/start')).toHaveLength(2);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'max-tokens' } }]);
  });

  it('turn-stopping is serial, and a steer from it continues the turn with another step', async () => {
    const f = await fixture([{ text: 'first' }, { text: 'second' }, { text: 'third' }]);
    const order: string[] = [];
    let rounds = 0;
    f.harness.hooks.on('agent/turn-stopping', async () => {
      order.push('first listener start');
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push('first listener end');
    });
    f.harness.hooks.on('agent/turn-stopping', ({ turn }) => {
      order.push(`second listener ${turn}`);
      if (rounds++ < 2) f.agent.steer(`keep going ${rounds}`);
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(order.slice(0, 3)).toEqual(['first listener start', 'first listener end', 'second listener 1']);
    expect(dataOf(f.agent, 'step/start')).toHaveLength(3);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });
});
