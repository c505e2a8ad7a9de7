import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { deferred } from '../../src/testing/index.ts';
import { dataOf, fixture, readFileTool, tick, types } from './support.ts';

const user = { kind: 'user' } as const;

describe('cancellation in each window (behaviour §9, section 0 item 2)', () => {
  it('in an agent/status running listener: no turn at all, inbox cleared, the cause recorded', async () => {
    const f = await fixture([{ text: 'never' }]);
    f.harness.hooks.on('agent/status', ({ status }) => {
      if (status === 'running') f.agent.cancel(user);
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(types(f.agent)).toEqual(['agent/inbox/spliced', 'agent/inbox/spliced', 'agent/cancelled']);
    expect(dataOf(f.agent, 'agent/inbox/spliced')[1]).toMatchObject({ outcome: 'canceled' });
    expect(f.agent.inbox.size()).toBe(0);
  });

  it('during pre-step: turn/start … turn/end aborted, no step, claimed messages never logged', async () => {
    const f = await fixture([{ text: 'never' }]);
    f.harness.hooks.on('agent/pre-step', async (_payload, next) => {
      f.agent.cancel(user);
      return next();
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(types(f.agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'agent/cancelled',
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
  });

  it('in a step/start observer: the step closes without a request', async () => {
    const f = await fixture([{ text: 'never' }]);
    f.harness.hooks.on('session/event', ({ event }) => {
      if (event.type === 'step/start') f.agent.cancel(user);
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(types(f.agent).slice(3)).toEqual([
      'step/start',
      'agent/cancelled',
      'user/message',
      'step/end',
      'turn/end',
    ]);
    expect(f.model.requests).toHaveLength(0);
  });

  it('mid-stream: chunks so far, an interrupted text prefix, step/end, turn/end aborted — and no request/failed', async () => {
    const f = await fixture([{ reasoning: 'thinking…', text: ['Hello ', 'wor'], hang: true }]);
    f.agent.followup('go');
    await new Promise<void>((resolve) => {
      const off = f.harness.hooks.on('session/event', ({ event }) => {
        if (
          event.type === 'assistant/chunk' &&
          (event.data as { chunk: { type: string } }).chunk.type === 'block-end'
        ) {
          const ends = f.agent.session.events.filter(
            (e) =>
              e.type === 'assistant/chunk' &&
              (e.data as { chunk: { type: string } }).chunk.type === 'block-end',
          );
          if (ends.length === 2) {
            off();
            resolve();
          }
        }
      });
    });
    f.agent.cancel(user);
    await f.agent.whenIdle();
    expect(types(f.agent).slice(-5)).toEqual([
      'request/context',
      'agent/cancelled',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const [message] = dataOf<{ interrupted?: boolean; message: { content: unknown[] } }>(
      f.agent,
      'assistant/message',
    );
    expect(message!.interrupted).toBe(true);
    expect(message!.message.content).toEqual([
      { type: 'reasoning', text: 'thinking…' },
      { type: 'text', text: 'Hello wor' },
    ]);
    expect(dataOf(f.agent, 'request/failed')).toEqual([]);
  });

  it('during agent/request-error: no retry, no interrupted message, turn aborted', async () => {
    const f = await fixture([{ error: { code: 'SERVER', message: 'down' } }, { text: 'never' }]);
    f.harness.hooks.on('agent/request-error', () => {
      f.agent.cancel(user);
      return { kind: 'retry' };
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(types(f.agent).slice(-4)).toEqual(['request/failed', 'step/end', 'agent/cancelled', 'turn/end']);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(f.model.requests).toHaveLength(1);
  });

  it('in an assistant/message observer with tools pending: every call gets an adjacent aborted pair, nothing runs', async () => {
    let ran = 0;
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'a', name: 'read_file', arguments: { path: 'x' } },
            { id: 'b', name: 'read_file', arguments: { path: 'y' } },
          ],
        },
      ],
      {
        tools: [
          readFileTool(() => {
            ran++;
            return 'no';
          }),
        ],
      },
    );
    f.harness.hooks.on('session/event', ({ event }) => {
      if (event.type === 'assistant/message') f.agent.cancel(user);
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(ran).toBe(0);
    expect(types(f.agent).slice(-8)).toEqual([
      'assistant/message',
      'agent/cancelled',
      'tool/call',
      'tool/result',
      'tool/call',
      'tool/result',
      'step/end',
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([
      { error: { code: 'ABORTED_BEFORE_DISPATCH' } },
      { error: { code: 'ABORTED_BEFORE_DISPATCH' } },
    ]);
  });

  it('while started bodies run: they drain, a success becomes ABORTED, unstarted calls get synthetic pairs', async () => {
    const started = deferred<void>();
    const release = deferred<void>();
    const slow: Tool<never> = {
      name: 'slow',
      description: 'ignores the signal until released',
      parameters: { type: 'object' },
      execute: async () => {
        started.resolve();
        await release.promise;
        return 'finished anyway';
      },
    } as never;
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'a', name: 'slow' },
            { id: 'b', name: 'slow' },
          ],
        },
      ],
      { tools: [slow] },
    );
    f.agent.followup('go');
    await started.promise;
    f.agent.cancel(user);
    await tick(5);
    expect(f.agent.status).toBe('running');
    release.resolve();
    await f.agent.whenIdle();
    const results = dataOf<{ error?: { code: string }; message: { source: { callId: string } } }>(
      f.agent,
      'tool/result',
    );
    expect(results.map((result) => [result.message.source.callId, result.error?.code])).toEqual([
      ['a', 'ABORTED'],
      ['b', 'ABORTED_BEFORE_DISPATCH'],
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
  });

  it('a tool honouring its signal ends promptly with an ABORTED result', async () => {
    const bodyStarted = deferred<void>();
    const f = await fixture([{ toolCalls: [{ id: 'a', name: 'read_file', arguments: { path: 'big' } }] }], {
      tools: [
        readFileTool(
          (_args, signal) =>
            new Promise((_resolve, reject) => {
              bodyStarted.resolve();
              signal.addEventListener('abort', () =>
                reject(Object.assign(new Error('aborted'), { name: 'AbortError' })),
              );
            }),
        ),
      ],
    });
    f.agent.followup('go');
    await bodyStarted.promise;
    f.agent.cancel(user);
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([{ error: { code: 'ABORTED' } }]);
  });

  it('in agent/turn-stopping: turn/end aborted and no further step', async () => {
    const f = await fixture([{ text: 'one' }, { text: 'never' }]);
    f.harness.hooks.on('agent/turn-stopping', () => {
      f.agent.steer('more');
      f.agent.cancel(user);
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'step/start')).toHaveLength(1);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
  });

  it('the first cause wins and is recorded once; turn/end stays coarse', async () => {
    const f = await fixture([{ text: 'x', hang: true }]);
    f.agent.followup('go');
    await new Promise<void>((resolve) =>
      f.harness.hooks.on('session/event', ({ event }) => {
        if (event.type === 'assistant/chunk') resolve();
      }),
    );
    f.agent.cancel({ kind: 'hook', reason: 'budget' });
    f.agent.cancel(user);
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'agent/cancelled')).toEqual([{ cause: { kind: 'hook', reason: 'budget' } }]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
  });

  it('cancelling an idle agent records no agent/cancelled (but still clears the inbox)', async () => {
    const f = await fixture([]);
    f.agent.send('parked', 'next-turn', false);
    f.agent.cancel(user);
    expect(types(f.agent)).toEqual(['agent/inbox/spliced', 'agent/inbox/spliced']);
    expect(f.agent.inbox.size()).toBe(0);
  });

  it('keepInbox keeps queued work parked until the next wake', async () => {
    const f = await fixture([{ text: 'slow', hang: true }, { text: 'queued ran' }, { text: 'third' }]);
    f.agent.followup('first');
    const queued = f.agent.send('queued', 'next-turn', false);
    await new Promise<void>((resolve) =>
      f.harness.hooks.on('session/event', ({ event }) => {
        if (event.type === 'assistant/chunk') resolve();
      }),
    );
    f.agent.cancel(user, { keepInbox: true });
    await f.agent.whenIdle();
    expect(f.agent.inbox.list('next-turn')).toEqual([queued]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    f.agent.followup('wake');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end')).toHaveLength(3);
    expect(dataOf<{ id: string }>(f.agent, 'user/message')[1]!.id).toBe(queued.id);
  });

  it('a waking send after the abort but before idle is rerouted to next-turn and latched', async () => {
    const f = await fixture([{ text: 'slow', hang: true }, { text: 'after abort' }]);
    f.agent.followup('first');
    await new Promise<void>((resolve) =>
      f.harness.hooks.on('session/event', ({ event }) => {
        if (event.type === 'assistant/chunk') resolve();
      }),
    );
    f.agent.cancel(user);
    const late = f.agent.steer('steer after stop');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'aborted' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    expect(dataOf<{ id: string; source: { kind: string } }>(f.agent, 'user/message')[1]).toMatchObject({
      id: late.id,
    });
    const splice = dataOf<{ target: string; inserted: { id: string }[] }>(
      f.agent,
      'agent/inbox/spliced',
    ).find((entry) => entry.inserted[0]?.id === late.id);
    expect(splice?.target).toBe('next-turn');
  });

  it('dispose cancels with { kind: disposed }, waits for idle, leaves the registry, and refuses sends', async () => {
    const f = await fixture([{ text: 'slow', hang: true }]);
    const disposed: string[] = [];
    f.harness.hooks.on('agent/disposed', ({ agent }) => {
      disposed.push(agent.id);
    });
    f.agent.followup('go');
    await new Promise<void>((resolve) =>
      f.harness.hooks.on('session/event', ({ event }) => {
        if (event.type === 'assistant/chunk') resolve();
      }),
    );
    await f.agent.dispose();
    expect(dataOf(f.agent, 'agent/cancelled')).toEqual([{ cause: { kind: 'disposed' } }]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(disposed).toEqual([f.agent.id]);
    expect(f.harness.agents.get(f.agent.id)).toBeUndefined();
    expect(() => f.agent.followup('late')).toThrowError(expect.objectContaining({ code: 'AGENT_DISPOSED' }));
  });

  it('a second live agent with the same id is rejected', async () => {
    const f = await fixture([]);
    await expect(f.harness.createAgent({ id: f.agent.id })).rejects.toMatchObject({ code: 'AGENT_EXISTS' });
  });

  it('cancelling a parent cancels its children with { kind: parent }', async () => {
    const f = await fixture([
      { text: 'parent', hang: true },
      { text: 'child', hang: true },
    ]);
    const child = await f.harness.createAgent({ provider: 'scripted', model: 'm', parent: f.agent });
    f.agent.followup('parent work');
    child.followup('child work');
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (child.session.events.some((event) => event.type === 'assistant/chunk')) resolve();
        else setTimeout(check, 1);
      };
      check();
    });
    f.agent.cancel(user);
    await Promise.all([f.agent.whenIdle(), child.whenIdle()]);
    expect(dataOf(child, 'agent/cancelled')).toEqual([{ cause: { kind: 'parent' } }]);
    expect(dataOf(child, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(child.session.header.parentSession).toBe(f.agent.id);
  });
});
