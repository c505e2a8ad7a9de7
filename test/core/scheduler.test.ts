import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { defineTool } from '../../src/index.ts';
import { deferred } from '../../src/testing/index.ts';
import { dataOf, fixture, tick, types } from './support.ts';

interface Probe {
  running: number;
  peak: number;
  order: string[];
}

function probeTool(
  name: string,
  probe: Probe,
  options: { parallel?: unknown; waitMs?: (id: string) => number } = {},
): Tool<never> {
  return defineTool<{ id: string }>({
    name,
    description: name,
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    ...(options.parallel !== undefined ? { isConcurrencySafe: () => options.parallel } : {}),
    execute: async ({ id }) => {
      probe.running++;
      probe.peak = Math.max(probe.peak, probe.running);
      probe.order.push(`start:${id}`);
      await tick(options.waitMs?.(id) ?? 5);
      probe.order.push(`end:${id}`);
      probe.running--;
      return `done ${id}`;
    },
  }) as Tool<never>;
}

const calls = (name: string, ids: string[]) => ids.map((id) => ({ id, name, arguments: { id } }));

function resultIds(f: { agent: Parameters<typeof dataOf>[0] }): string[] {
  return dataOf<{ message: { source: { callId: string } } }>(f.agent, 'tool/result').map(
    (r) => r.message.source.callId,
  );
}

describe('tool scheduling: barriers and a bounded rolling pool, results in model order', () => {
  it('the pool never exceeds its bound', async () => {
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const ids = Array.from({ length: 7 }, (_, index) => `p${index}`);
    const f = await fixture([{ toolCalls: calls('par', ids) }, { text: 'done' }], {
      tools: [probeTool('par', probe, { parallel: true })],
      maxParallelToolCalls: 3,
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(probe.peak).toBe(3);
    expect(resultIds(f)).toEqual(ids);
  });

  it('defaults to a pool of 10', async () => {
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const ids = Array.from({ length: 16 }, (_, index) => `p${index}`);
    const f = await fixture([{ toolCalls: calls('par', ids) }, { text: 'done' }], {
      tools: [probeTool('par', probe, { parallel: true, waitMs: () => 20 })],
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(probe.peak).toBe(10);
  });

  it('an exclusive call is a barrier: the group before it finishes, it runs alone, then later calls start', async () => {
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const f = await fixture(
      [
        {
          toolCalls: [
            ...calls('par', ['a', 'b']),
            { id: 'x', name: 'excl', arguments: { id: 'x' } },
            ...calls('par', ['c', 'd']),
          ],
        },
        { text: 'done' },
      ],
      { tools: [probeTool('par', probe, { parallel: true }), probeTool('excl', probe)] },
    );
    f.agent.followup('go');
    await f.agent.whenIdle();
    const order = probe.order;
    expect(order.indexOf('start:x')).toBeGreaterThan(
      Math.max(order.indexOf('end:a'), order.indexOf('end:b')),
    );
    expect(order.indexOf('end:x')).toBeLessThan(Math.min(order.indexOf('start:c'), order.indexOf('start:d')));
    expect(resultIds(f)).toEqual(['a', 'b', 'x', 'c', 'd']);
  });

  it('only a literal true is parallel: omitted, truthy non-true, throwing or invalid arguments are exclusive', async () => {
    const cases: [string, unknown][] = [
      ['truthy', 'yes'],
      ['one', 1],
    ];
    for (const [label, value] of cases) {
      const probe: Probe = { running: 0, peak: 0, order: [] };
      const f = await fixture([{ toolCalls: calls('t', ['a', 'b', 'c']) }, { text: label }], {
        tools: [probeTool('t', probe, { parallel: value })],
      });
      f.agent.followup('go');
      await f.agent.whenIdle();
      expect(probe.peak, label).toBe(1);
    }
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const throwing = defineTool<{ id: string }>({
      name: 'throwing',
      description: 'classifier throws',
      parameters: { type: 'object' },
      isConcurrencySafe: () => {
        throw new Error('cannot tell');
      },
      execute: async () => {
        probe.running++;
        probe.peak = Math.max(probe.peak, probe.running);
        await tick(3);
        probe.running--;
        return 'ok';
      },
    });
    const f = await fixture([{ toolCalls: calls('throwing', ['a', 'b']) }, { text: 'x' }], {
      tools: [throwing as Tool<never>],
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(probe.peak).toBe(1);
    expect(f.harness.tools.executionMode('par-missing', '{}')).toEqual({ kind: 'exclusive' });
  });

  it('results are logged in model order when completion order is reversed', async () => {
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const ids = ['a', 'b', 'c', 'd'];
    const waits: Record<string, number> = { a: 40, b: 30, c: 20, d: 5 };
    const f = await fixture([{ toolCalls: calls('par', ids) }, { text: 'done' }], {
      tools: [probeTool('par', probe, { parallel: true, waitMs: (id) => waits[id]! })],
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(probe.order.filter((entry) => entry.startsWith('end:'))).toEqual([
      'end:d',
      'end:c',
      'end:b',
      'end:a',
    ]);
    expect(resultIds(f)).toEqual(ids);
    const next = f.model.requests[1]!.messages.slice(-4).map(
      (message) => (message.source as { callId: string }).callId,
    );
    expect(next).toEqual(ids);
  });

  it('with a bound of 2, the first result commits before the third call is logged', async () => {
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const f = await fixture([{ toolCalls: calls('par', ['c1', 'c2', 'c3', 'c4']) }, { text: 'done' }], {
      tools: [probeTool('par', probe, { parallel: true, waitMs: (id) => (id === 'c1' ? 5 : 30) })],
      maxParallelToolCalls: 2,
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    const toolEvents = f.agent.session.events
      .filter((event) => event.type === 'tool/call' || event.type === 'tool/result')
      .map((event) =>
        event.type === 'tool/call'
          ? `call:${(event.data as { callId: string }).callId}`
          : `result:${(event.data as { message: { source: { callId: string } } }).message.source.callId}`,
      );
    expect(toolEvents.slice(0, 4)).toEqual(['call:c1', 'call:c2', 'result:c1', 'call:c3']);
  });

  it('reclassifies each call just before it starts', async () => {
    let world = 'calm';
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const shifty = defineTool<{ id: string }>({
      name: 'shifty',
      description: 'parallel until the world changes',
      parameters: { type: 'object', properties: { id: { type: 'string' } } },
      isConcurrencySafe: () => world === 'calm',
      execute: async ({ id }) => {
        probe.running++;
        probe.peak = Math.max(probe.peak, probe.running);
        probe.order.push(`start:${id}`);
        if (id === 'a') world = 'stormy';
        await tick(10);
        probe.order.push(`end:${id}`);
        probe.running--;
        return 'ok';
      },
    });
    const f = await fixture([{ toolCalls: calls('shifty', ['a', 'b']) }, { text: 'done' }], {
      tools: [shifty as Tool<never>],
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    // b was reclassified exclusive after a changed the world, so it waited for a to finish.
    expect(probe.order).toEqual(['start:a', 'end:a', 'start:b', 'end:b']);
  });

  it('unknown tools and invalid arguments become error results the model can read', async () => {
    const probe: Probe = { running: 0, peak: 0, order: [] };
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'u1', name: 'missing_tool', arguments: {} },
            { id: 'v1', name: 'par', arguments: { wrong: 1 } },
            { id: 'v2', name: 'par', arguments: '{not json' },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [probeTool('par', probe, { parallel: true })] },
    );
    f.agent.followup('go');
    await f.agent.whenIdle();
    const results = dataOf<{
      error?: { code: string };
      message: { content: { content: { text: string }[] }[] };
    }>(f.agent, 'tool/result');
    expect(results.map((result) => result.error?.code)).toEqual([
      'UNKNOWN_TOOL',
      'INVALID_ARGUMENTS',
      'INVALID_ARGUMENTS',
    ]);
    expect(results[1]!.message.content[0]!.content[0]!.text).toContain('id');
    expect(probe.order).toEqual([]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('a tool that throws gives an error result with its code; a concluding tool ends the turn', async () => {
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'a', name: 'boom' },
            { id: 'b', name: 'finish' },
          ],
        },
      ],
      {
        tools: [
          {
            name: 'boom',
            description: 'throws',
            parameters: { type: 'object' },
            execute: () => {
              throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
            },
          } as never,
          {
            name: 'finish',
            description: 'concludes',
            parameters: { type: 'object' },
            execute: (_args: unknown, ctx: { concludeTurn(): void }) => {
              ctx.concludeTurn();
              return 'all done';
            },
          } as never,
        ],
      },
    );
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([{ error: { code: 'TOOL_FAILED' } }, {}]);
    expect(dataOf(f.agent, 'step/start')).toHaveLength(1);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('additional contexts from a tool are spliced into next-step right after its result', async () => {
    const f = await fixture([{ toolCalls: [{ id: 'a', name: 'ctx' }] }, { text: 'seen' }], {
      tools: [
        {
          name: 'ctx',
          description: 'defers context',
          parameters: { type: 'object' },
          execute: (_a: unknown, ctx: { deferContext(m: string): void }) => {
            ctx.deferContext('AGENTS.md says: use tabs');
            return 'ok';
          },
        } as never,
      ],
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    const sequence = types(f.agent);
    const result = sequence.indexOf('tool/result');
    expect(sequence.slice(result, result + 3)).toEqual(['tool/result', 'agent/inbox/spliced', 'step/end']);
    expect(f.model.requests[1]!.messages.at(-1)!.content[0]).toEqual({
      type: 'text',
      text: 'AGENTS.md says: use tabs',
    });
  });

  it('context callbacks work unbound and survive a spread copy of the context', async () => {
    type Callbacks = { deferContext(m: string): void; concludeTurn(): void };
    const deferring = await fixture([{ toolCalls: [{ id: 'a', name: 'defer' }] }, { text: 'seen' }], {
      tools: [
        {
          name: 'defer',
          description: 'defers context through a copied context',
          parameters: { type: 'object' },
          execute: (_a: unknown, ctx: Callbacks) => {
            const { deferContext } = { ...ctx };
            deferContext('from a copied context');
            return 'ok';
          },
        } as never,
      ],
    });
    deferring.agent.followup('go');
    await deferring.agent.whenIdle();
    expect(deferring.model.requests[1]!.messages.at(-1)!.content[0]).toEqual({
      type: 'text',
      text: 'from a copied context',
    });
    const concluding = await fixture([{ toolCalls: [{ id: 'b', name: 'finish' }] }, { text: 'unused' }], {
      tools: [
        {
          name: 'finish',
          description: 'concludes through a copied context',
          parameters: { type: 'object' },
          execute: (_a: unknown, ctx: Callbacks) => {
            const { concludeTurn } = { ...ctx };
            concludeTurn();
            return 'all done';
          },
        } as never,
      ],
    });
    concluding.agent.followup('go');
    await concluding.agent.whenIdle();
    expect(concluding.model.requests).toHaveLength(1);
    expect(dataOf(concluding.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('approval asked with no approver attached is denied (fail closed)', async () => {
    const ran = deferred<void>();
    const f = await fixture([{ toolCalls: [{ id: 'w', name: 'write' }] }, { text: 'ok' }], {
      tools: [
        {
          name: 'write',
          description: 'writes',
          parameters: { type: 'object' },
          execute: () => {
            ran.resolve();
            return 'wrote';
          },
        } as never,
      ],
    });
    f.harness.hooks.on('tools/pre-execute', () => ({ kind: 'ask' }));
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/approval-decided')).toMatchObject([{ decision: 'deny' }]);
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([{ error: { code: 'TOOL_DENIED' } }]);
    const ranYet = await Promise.race([ran.promise.then(() => true), tick(5).then(() => false)]);
    expect(ranYet).toBe(false);
  });
});
