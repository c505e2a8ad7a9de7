import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { defineTool } from '../../src/index.ts';
import { deferred, waitForEvent } from '../../src/testing/index.ts';
import { dataOf, fixture, tick, types } from './support.ts';

const noop = defineTool<Record<string, never>>({
  name: 'noop',
  description: 'does nothing',
  parameters: { type: 'object' },
  execute: () => 'ran',
}) as Tool<never>;

function resultsOf(agent: Parameters<typeof dataOf>[0]): { callId: string; text: string; code?: string }[] {
  return dataOf<{
    message: { source: { callId: string }; content: { content: { text: string }[] }[] };
    error?: { code: string };
  }>(agent, 'tool/result').map((result) => ({
    callId: result.message.source.callId,
    text: result.message.content[0]!.content[0]!.text,
    ...(result.error !== undefined ? { code: result.error.code } : {}),
  }));
}

describe('max-tokens never stops a step still owed (§0.4)', () => {
  it('a step after a max-tokens step calls a tool: its result is still sent, the turn ends max-tokens', async () => {
    const f = await fixture(
      [
        { text: 'cut short', finish: 'max-tokens' },
        { toolCalls: [{ id: 't1', name: 'noop', arguments: {} }] },
        { text: 'done with the result' },
      ],
      { tools: [noop] },
    );
    let steered = false;
    f.harness.hooks.on('agent/turn-stopping', () => {
      if (steered) return;
      steered = true;
      f.agent.steer('go on');
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(f.model.requests).toHaveLength(3);
    const last = f.model.requests[2]!.messages.at(-1)!;
    expect(last.content).toEqual([
      { type: 'tool-result', toolCallId: 't1', content: [{ type: 'text', text: 'ran' }] },
    ]);
    expect(types(f.agent).filter((type) => type.startsWith('step/') || type.startsWith('tool/'))).toEqual([
      'step/start',
      'step/end',
      'step/start',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'step/end',
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'max-tokens' } }]);
  });
});

describe('the pool reclassifies a call after waiting for a slot (§10.3)', () => {
  it('a classifier that turns exclusive when the first call finishes keeps the third call until the second drains', async () => {
    let firstDone = false;
    const release = deferred();
    const releaseFirst = deferred();
    const order: string[] = [];
    const tool = defineTool<{ id: string }>({
      name: 'job',
      description: 'a job',
      parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      isConcurrencySafe: () => !firstDone,
      execute: async ({ id }) => {
        order.push(`start:${id}`);
        if (id === 'c2') await release.promise;
        if (id === 'c1') {
          await releaseFirst.promise;
          firstDone = true;
        }
        order.push(`end:${id}`);
        return `done ${id}`;
      },
    }) as Tool<never>;
    const f = await fixture(
      [
        { toolCalls: ['c1', 'c2', 'c3'].map((id) => ({ id, name: 'job', arguments: { id } })) },
        { text: 'ok' },
      ],
      { tools: [tool], maxParallelToolCalls: 2 },
    );
    f.agent.followup('go');
    await waitForEvent(
      f.agent.session,
      (event) => event.type === 'tool/call' && (event.data as { callId: string }).callId === 'c2',
    );
    await tick(5);
    expect(order).toEqual(['start:c1', 'start:c2']);
    releaseFirst.resolve();
    await waitForEvent(f.agent.session, (event) => event.type === 'tool/result');
    await tick(20);
    // c1 finished and freed a slot, but c3 is now exclusive: it waits for c2 to drain.
    expect(order).toEqual(['start:c1', 'start:c2', 'end:c1']);
    release.resolve();
    await f.agent.whenIdle();
    expect(order).toEqual(['start:c1', 'start:c2', 'end:c1', 'end:c2', 'start:c3', 'end:c3']);
    const toolEvents = f.agent.session.events
      .filter((event) => event.type === 'tool/call' || event.type === 'tool/result')
      .map((event) =>
        event.type === 'tool/call'
          ? `call ${(event.data as { callId: string }).callId}`
          : `result ${(event.data as { message: { source: { callId: string } } }).message.source.callId}`,
      );
    expect(toolEvents).toEqual(['call c1', 'call c2', 'result c1', 'result c2', 'call c3', 'result c3']);
  });
});

describe('approval without an approver, and approvers that fail (§10.4, §0.12)', () => {
  it('no approver attached: the ask reason reaches the model, the denial keeps TOOL_DENIED', async () => {
    const f = await fixture([{ toolCalls: [{ id: 'a1', name: 'noop', arguments: {} }] }, { text: 'ok' }], {
      tools: [noop],
    });
    f.harness.hooks.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'noop touches the network' }));
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/approval-decided')).toEqual([
      {
        requestId: expect.any(String),
        callId: 'a1',
        decision: 'deny',
        reason: 'this call needs approval and no approver is attached',
      },
    ]);
    expect(resultsOf(f.agent)).toEqual([
      {
        callId: 'a1',
        text: 'Error: noop needs approval (noop touches the network) and no approver is attached, so it was denied',
        code: 'TOOL_DENIED',
      },
    ]);
    expect(f.model.requests[1]!.messages.at(-1)!.content[0]).toMatchObject({
      type: 'tool-result',
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('noop touches the network') }],
    });
  });

  it('a policy denial keeps its TOOL_DENIED code and reason', async () => {
    const f = await fixture([{ toolCalls: [{ id: 'd1', name: 'noop', arguments: {} }] }, { text: 'ok' }], {
      tools: [noop],
    });
    f.harness.hooks.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'noop is off limits' }));
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(resultsOf(f.agent)).toEqual([
      { callId: 'd1', text: 'Error: noop is off limits', code: 'TOOL_DENIED' },
    ]);
  });

  for (const [label, notify, detail] of [
    [
      'throws',
      () => {
        throw new Error('approval window crashed');
      },
      'the approver failed: approval window crashed',
    ],
    [
      'answers synchronously with nonsense',
      () => ({ decision: 'maybe' }),
      'the approver failed: it answered {"decision":"maybe"}, not a decision',
    ],
    ['rejects', () => Promise.reject(new Error('socket gone')), 'the approver failed: socket gone'],
  ] as const) {
    it(`an approver that ${label} fails closed: a paired deny, and the agent stays usable`, async () => {
      const f = await fixture(
        [{ toolCalls: [{ id: 'n1', name: 'noop', arguments: {} }] }, { text: 'ok' }, { text: 'second turn' }],
        { tools: [noop] },
      );
      f.harness.hooks.on('tools/pre-execute', () => ({ kind: 'ask', reason: 'check first' }));
      f.harness.approvals.attach({ notify: notify as never });
      f.agent.followup('go');
      await f.agent.whenIdle();
      const requested = dataOf<{ requestId: string }>(f.agent, 'tool/approval-requested');
      expect(dataOf(f.agent, 'tool/approval-decided')).toEqual([
        { requestId: requested[0]!.requestId, callId: 'n1', decision: 'deny', reason: detail },
      ]);
      expect(resultsOf(f.agent)).toEqual([
        {
          callId: 'n1',
          text: `Error: noop needs approval (check first), but ${detail}, so it was denied`,
          code: 'TOOL_DENIED',
        },
      ]);
      expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
      f.agent.followup('again');
      await f.agent.whenIdle();
      expect(dataOf(f.agent, 'turn/end')).toHaveLength(2);
    });
  }

  it('an approver that answers synchronously with a decision is obeyed at once', async () => {
    const f = await fixture([{ toolCalls: [{ id: 's1', name: 'noop', arguments: {} }] }, { text: 'ok' }], {
      tools: [noop],
    });
    f.harness.hooks.on('tools/pre-execute', () => ({ kind: 'ask' }));
    f.harness.approvals.attach({ notify: () => ({ decision: 'allow-once' }) });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/approval-decided')).toMatchObject([
      { callId: 's1', decision: 'allow-once' },
    ]);
    expect(resultsOf(f.agent)).toEqual([{ callId: 's1', text: 'ran' }]);
  });
});

describe('raw arguments reach raw tools (§0.13)', () => {
  it('a tool without a parameter schema receives non-JSON arguments as the raw string; an object schema refuses them', async () => {
    const received: unknown[] = [];
    const raw = defineTool({
      name: 'patch',
      description: 'applies a raw patch',
      execute: (args) => {
        received.push(args);
        return 'applied';
      },
    }) as Tool<never>;
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'r1', name: 'patch', arguments: '*** Begin Patch\n+hello' },
            { id: 'r2', name: 'patch', arguments: { file: 'a.txt' } },
            { id: 'r3', name: 'noop', arguments: 'not json' },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [raw, noop] },
    );
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(received).toEqual(['*** Begin Patch\n+hello', { file: 'a.txt' }]);
    expect(resultsOf(f.agent)).toEqual([
      { callId: 'r1', text: 'applied' },
      { callId: 'r2', text: 'applied' },
      {
        callId: 'r3',
        text: 'Error: invalid arguments for noop: arguments are not valid JSON: not json',
        code: 'INVALID_ARGUMENTS',
      },
    ]);
    expect(dataOf<{ arguments: string }>(f.agent, 'tool/call').map((call) => call.arguments)).toEqual([
      '*** Begin Patch\n+hello',
      '{"file":"a.txt"}',
      'not json',
    ]);
    expect(f.harness.tools.schemas(undefined).find((schema) => schema.name === 'patch')!.parameters).toEqual({
      type: 'object',
      additionalProperties: true,
    });
  });
});
