import { describe, expect, it } from 'vitest';
import { Inbox, createUserMessage } from '../../src/internal.ts';
import { dataOf, fixture, tick, types } from './support.ts';

describe('inbox: two queues, durable splices, claim as pure deletion', () => {
  it('claim takes all next-step input plus one next-turn message, with claimed notifications in batch order', async () => {
    const f = await fixture([{ text: 'one' }, { text: 'two' }]);
    const claimed: string[] = [];
    f.harness.hooks.on('agent/inbox/claimed', ({ message, turn }) => {
      claimed.push(
        `${turn}:${message.content[0]!.type === 'text' ? (message.content[0] as { text: string }).text : ''}`,
      );
    });
    const first = f.agent.inbox;
    f.agent.inject('context A');
    f.agent.inject('context B');
    f.agent.send('prompt 1', 'next-turn', false);
    f.agent.send('prompt 2', 'next-turn', false);
    expect(f.agent.status).toBe('idle');
    expect(first.size('next-step')).toBe(2);
    f.agent.send('prompt 3', 'next-turn', true);
    await f.agent.whenIdle();
    // Turn 1 claimed both injections and the first prompt; turns 2 and 3 followed without a new wake.
    expect(claimed).toEqual(['1:context A', '1:context B', '1:prompt 1', '2:prompt 2', '3:prompt 3']);
    const splices = dataOf<{ target: string; removedCount?: number; outcome?: string }>(
      f.agent,
      'agent/inbox/spliced',
    );
    const claims = splices.filter((splice) => splice.removedCount !== undefined);
    expect(claims.map((splice) => [splice.target, splice.removedCount])).toEqual([
      ['next-step', 2],
      ['next-turn', 1],
      ['next-turn', 1],
      ['next-turn', 1],
    ]);
    expect(claims.every((splice) => splice.outcome === undefined)).toBe(true);
    const userMessages = dataOf<{ source: { kind: string } }>(f.agent, 'user/message').map(
      (m) => m.source.kind,
    );
    expect(userMessages).toEqual(['inject', 'inject', 'user', 'user', 'user']);
  });

  it('inject without wake is only parked while idle', async () => {
    const f = await fixture([]);
    f.agent.inject('a file changed');
    await tick(5);
    expect(f.agent.status).toBe('idle');
    expect(types(f.agent)).toEqual(['agent/inbox/spliced']);
    expect(f.agent.inbox.list('next-step')).toHaveLength(1);
  });

  it('remove, replace and clear are cancellations: outcome canceled and discarded notifications', async () => {
    const f = await fixture([]);
    const discarded: string[] = [];
    f.harness.hooks.on('agent/inbox/discarded', ({ message }) => {
      discarded.push(message.id);
    });
    const a = f.agent.send('a', 'next-turn', false);
    const b = f.agent.send('b', 'next-turn', false);
    const c = f.agent.send('c', 'next-step', false);
    const b2 = createUserMessage('b2');
    expect(f.agent.inbox.replace(b.id, b2)).toBe(true);
    expect(f.agent.inbox.remove(a.id)).toBe(true);
    expect(f.agent.inbox.remove(a.id)).toBe(false);
    f.agent.inbox.clear();
    expect(discarded).toEqual([b.id, a.id, c.id, b2.id]);
    const splices = dataOf<{ target: string; start: number; removedCount?: number; outcome?: string }>(
      f.agent,
      'agent/inbox/spliced',
    ).slice(3);
    expect(splices).toEqual([
      { target: 'next-turn', start: 1, removedCount: 1, inserted: [b2], outcome: 'canceled' },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' },
      { target: 'next-step', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' },
    ]);
    expect(f.agent.inbox.size()).toBe(0);
  });

  it('rejects a message id that is already pending, and records nothing', async () => {
    const f = await fixture([]);
    const message = f.agent.send('once', 'next-turn', false);
    const before = f.agent.session.length;
    expect(() => f.agent.inbox.append('next-step', message)).toThrowError(
      expect.objectContaining({ code: 'INVALID_INBOX_OPERATION' }),
    );
    expect(f.agent.session.length).toBe(before);
  });

  it('rebuilds pending items from the log', async () => {
    const f = await fixture([]);
    const kept = f.agent.send('kept', 'next-turn', false);
    const gone = f.agent.send('gone', 'next-turn', false);
    const step = f.agent.inject('ctx');
    f.agent.inbox.remove(gone.id);
    const rebuilt = new Inbox({ session: f.agent.session, hooks: f.harness.hooks });
    expect(rebuilt.list('next-turn')).toEqual([kept]);
    expect(rebuilt.list('next-step')).toEqual([step]);
  });

  it('non-JSON message content is refused with a clear error and nothing is appended', async () => {
    const f = await fixture([]);
    const before = f.agent.session.length;
    const bad = {
      id: 'x',
      role: 'user',
      content: [{ type: 'text', text: 'hi', extra: () => 1 }],
      source: { kind: 'user' },
    };
    expect(() => f.agent.followup(bad as never)).toThrowError(/not lossless JSON/);
    expect(f.agent.session.length).toBe(before);
    expect(f.agent.status).toBe('idle');
  });
});

describe('sending while running', () => {
  it('steer mid-turn is claimed at the next step boundary and forces another step', async () => {
    const f = await fixture(
      [{ text: 'working', toolCalls: [{ id: 'c1', name: 'noop' }] }, { text: 'saw the steer' }],
      {
        tools: [
          {
            name: 'noop',
            description: 'no-op',
            parameters: { type: 'object' },
            execute: () => {
              f.agent.steer('focus on tests');
              return 'ok';
            },
          } as never,
        ],
      },
    );
    f.agent.followup('start');
    await f.agent.whenIdle();
    const entered = dataOf<{ source: { kind: string } }>(f.agent, 'user/message').map((m) => m.source.kind);
    expect(entered).toEqual(['user', 'steer']);
    expect(types(f.agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'assistant/message',
      'tool/call',
      'agent/inbox/spliced',
      'tool/result',
      'step/end',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(f.model.requests[1]!.messages.at(-1)!.content[0]).toEqual({
      type: 'text',
      text: 'focus on tests',
    });
  });

  it('an inject that arrives while a turn runs forces another step like steering', async () => {
    const f = await fixture([{ text: 'first' }, { text: 'second' }]);
    f.harness.hooks.on('session/event', ({ event }) => {
      if (
        event.type === 'assistant/message' &&
        f.agent.session.eventsOfType('assistant/message').length === 1
      ) {
        f.agent.inject('late context');
      }
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('a followup sent mid-turn becomes the next turn in the same running interval', async () => {
    const f = await fixture([{ text: 'one', delayMs: 5 }, { text: 'two' }]);
    f.agent.followup('first');
    f.agent.followup('second');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'completed' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    expect(f.timeline.filter((entry) => entry.startsWith('agent/status'))).toEqual([
      'agent/status:running',
      'agent/status:idle',
    ]);
  });
});
