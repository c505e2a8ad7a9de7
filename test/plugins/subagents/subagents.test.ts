import { describe, expect, it } from 'vitest';
import type { Agent, LlmRequest, Tool } from '../../../src/index.ts';
import { defineTool, messageText, subagentsPlugin } from '../../../src/index.ts';
import type { Deferred, ScriptedResponse } from '../../../src/testing/index.ts';
import { ScriptedProvider, deferred, waitForEvent } from '../../../src/testing/index.ts';
import { dataOf, plotOf, pluginFixture, waitGate } from '../goals/plugin-fixture.ts';

const usage = { inputTokens: 10, outputTokens: 2 };

/** Children play this: call `block` with their prompt as the key, then answer with the key. */
function childScript(request: LlmRequest): ScriptedResponse {
  const key = messageText(request.messages[0]!);
  const last = request.messages.at(-1)!;
  if (last.source.kind === 'tool') return { text: `answer ${key}`, usage };
  return { toolCalls: [{ id: `block_${key}`, name: 'block', arguments: { key } }], usage };
}

/** A tool each child waits in until its gate opens (or its turn is cancelled). */
function blockTool(keys: readonly string[]) {
  const started = new Map<string, Deferred<void>>(keys.map((key) => [key, deferred()]));
  const gates = new Map<string, Deferred<void>>(keys.map((key) => [key, deferred()]));
  const state = { active: 0, maxActive: 0 };
  const tool = defineTool<{ key: string }>({
    name: 'block',
    description: 'Wait for a gate',
    effect: 'read',
    parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
    execute: async (args, context) => {
      state.active++;
      state.maxActive = Math.max(state.maxActive, state.active);
      started.get(args.key)!.resolve();
      try {
        await waitGate(context.signal, gates.get(args.key)!.promise);
        return `unblocked ${args.key}`;
      } finally {
        state.active--;
      }
    },
  }) as Tool<never>;
  return { tool, started, gates, state };
}

const taskCall = (key: string) => ({ id: `task_${key}`, name: 'task', arguments: { prompt: key } });

async function threeChildren(maxParallelToolCalls?: number) {
  const kids = new ScriptedProvider({ provider: 'kids', fallback: childScript });
  const block = blockTool(['A', 'B', 'C']);
  const f = await pluginFixture(
    [{ toolCalls: [taskCall('A'), taskCall('B'), taskCall('C')] }, { text: 'all done' }],
    {
      plugins: [subagentsPlugin({ provider: 'kids', model: 'kid-model', tools: ['block'] })],
      tools: [block.tool],
      extraProviders: [kids],
      ...(maxParallelToolCalls !== undefined ? { maxParallelToolCalls } : {}),
    },
  );
  const children: Agent[] = [];
  f.harness.hooks.on('agent/created', ({ agent }) => {
    if (agent.options.parent !== undefined) children.push(agent);
  });
  return { ...f, kids, block, children };
}

describe('subagents', () => {
  it('three children started in one step run concurrently within the pool bound; results in model order', async () => {
    const f = await threeChildren(2);
    f.agent.followup('Do three things');
    await Promise.all([f.block.started.get('A')!.promise, f.block.started.get('B')!.promise]);
    expect(f.children).toHaveLength(2);
    expect(f.block.state.active).toBe(2);

    // B finishes first; its slot lets C start, while A still runs.
    f.block.gates.get('B')!.resolve();
    await f.block.started.get('C')!.promise;
    expect(f.children).toHaveLength(3);
    f.block.gates.get('C')!.resolve();
    f.block.gates.get('A')!.resolve();
    await f.agent.whenIdle();

    expect(f.block.state.maxActive).toBe(2);
    const results = dataOf<{ message: { content: { content: { text: string }[] }[] }; meta: unknown }>(
      f.agent,
      'tool/result',
    );
    expect(results.map((result) => result.message.content[0]!.content[0]!.text)).toEqual([
      'answer A',
      'answer B',
      'answer C',
    ]);
    const byPrompt = new Map(
      f.children.map((child) => [messageText(child.session.deriveMessages()[0]!), child]),
    );
    expect(results.map((result) => result.meta)).toEqual(
      ['A', 'B', 'C'].map((key) => ({
        childSessionId: byPrompt.get(key)!.id,
        usage: {
          inputTokens: 20,
          outputTokens: 4,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
        },
      })),
    );
    for (const key of ['A', 'B', 'C']) {
      const child = byPrompt.get(key)!;
      expect(child.session.header).toMatchObject({
        parentSession: f.agent.id,
        parentCallId: `task_${key}`,
        origin: 'subagent',
        delegationDepth: 1,
      });
      expect(child.disposed).toBe(true);
      expect(f.harness.agents.get(child.id)).toBeUndefined();
      // Children are persisted like any session.
      const stored = await f.harness.store.read(child.id);
      expect(stored.events.map((event) => event.type).filter((type) => type === 'turn/end')).toEqual([
        'turn/end',
      ]);
      expect(plotOf(child).at(-1)).toBe('turn/end');
      expect(dataOf(child, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    }
    // The children saw only the narrowed tool set, on their own route.
    expect(
      f.kids.requests.every((request) => request.tools?.map((tool) => tool.name).join() === 'block'),
    ).toBe(true);
    expect(f.kids.requests.every((request) => request.model === 'kid-model')).toBe(true);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    expect(f.model.requests).toHaveLength(2);
    expect(f.listenerErrors).toEqual([]);
  });

  it('cancelling the parent cancels every child with {parent}; the parent turn ends aborted after they are idle', async () => {
    const f = await threeChildren();
    const atParentTurnEnd: { idle: boolean; last: string | undefined }[] = [];
    f.harness.hooks.on('session/event', ({ session, event }) => {
      if (session.id !== f.agent.id || event.type !== 'turn/end') return;
      for (const child of f.children) {
        atParentTurnEnd.push({ idle: child.status === 'idle', last: child.session.events.at(-1)?.type });
      }
    });
    f.agent.followup('Do three things');
    await Promise.all(['A', 'B', 'C'].map((key) => f.block.started.get(key)!.promise));
    expect(f.block.state.active).toBe(3);
    f.agent.cancel({ kind: 'user' });
    await f.agent.whenIdle();

    expect(atParentTurnEnd).toEqual([
      { idle: true, last: 'turn/end' },
      { idle: true, last: 'turn/end' },
      { idle: true, last: 'turn/end' },
    ]);
    for (const child of f.children) {
      const plot = plotOf(child);
      expect(plot.slice(plot.indexOf('agent/cancelled'))).toEqual([
        'agent/cancelled',
        'tool/result',
        'step/end',
        'turn/end',
      ]);
      expect(dataOf(child, 'agent/cancelled')).toEqual([{ cause: { kind: 'parent' } }]);
      expect(dataOf(child, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
      expect(child.disposed).toBe(true);
    }
    expect(f.block.state.active).toBe(0);
    expect(dataOf(f.agent, 'agent/cancelled')).toEqual([{ cause: { kind: 'user' } }]);
    expect(
      dataOf<{ error: { code: string } }>(f.agent, 'tool/result').map((result) => result.error.code),
    ).toEqual(['ABORTED', 'ABORTED', 'ABORTED']);
    expect(plotOf(f.agent).slice(-2)).toEqual(['step/end', 'turn/end']);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(f.model.requests).toHaveLength(1);
  });

  it('a child that errors gives the parent an error result, and the parent continues', async () => {
    const kids = new ScriptedProvider({
      provider: 'kids',
      fallback: { error: { code: 'SERVER', message: 'the model is overloaded' } },
    });
    const f = await pluginFixture([{ toolCalls: [taskCall('A')] }, { text: 'I will do it myself.' }], {
      plugins: [subagentsPlugin({ provider: 'kids', model: 'kid-model' })],
      extraProviders: [kids],
    });
    f.agent.followup('Delegate');
    await f.agent.whenIdle();
    const [result] = dataOf<{
      error: { code: string };
      message: { content: { content: { text: string }[] }[] };
    }>(f.agent, 'tool/result');
    expect(result!.error).toEqual({ name: 'ToolError', code: 'SUBAGENT_FAILED' });
    expect(result!.message.content[0]!.content[0]!.text).toContain('SERVER: the model is overloaded');
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    expect(f.model.requests).toHaveLength(2);
    expect(f.harness.agents.list()).toEqual([f.agent]);
  });

  it('at the depth limit the call is an error result and no child is created', async () => {
    const f = await pluginFixture([{ toolCalls: [taskCall('A')] }, { text: 'ok' }], {
      plugins: [subagentsPlugin()],
      agent: { delegationDepth: 2 },
    });
    const created: Agent[] = [];
    f.harness.hooks.on('agent/created', ({ agent }) => {
      created.push(agent);
    });
    f.agent.followup('Delegate');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([
      { error: { name: 'ToolError', code: 'DELEGATION_DEPTH_EXCEEDED' } },
    ]);
    expect(created).toEqual([]);
    expect((await f.harness.store.list()).map((summary) => summary.id)).toEqual([f.agent.id]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('a child at the depth limit is not offered the task tool; a call may only narrow to tools the parent has', async () => {
    const kids = new ScriptedProvider({
      provider: 'kids',
      fallback: { text: 'child answer', usage: { inputTokens: 1000, outputTokens: 500 } },
      models: { 'kid-model': { pricing: { input: 2, output: 10 } } },
    });
    const block = blockTool([]);
    const f = await pluginFixture(
      [
        {
          toolCalls: [
            { id: 'bad', name: 'task', arguments: { prompt: 'x', tools: ['rm_rf'] } },
            { ...taskCall('A'), arguments: { prompt: 'A', description: 'Survey A' } },
          ],
        },
        { text: 'ok' },
      ],
      {
        plugins: [subagentsPlugin({ provider: 'kids', model: 'kid-model', maxDepth: 1 })],
        tools: [block.tool],
        extraProviders: [kids],
      },
    );
    f.agent.followup('Delegate');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([
      { error: { code: 'SUBAGENT_TOOLS_UNAVAILABLE' } },
      {
        meta: {
          childSessionId: expect.any(String),
          description: 'Survey A',
          usage: { inputTokens: 1000, outputTokens: 500 },
          costUsd: expect.closeTo(0.007, 12),
        },
        message: { content: [{ content: [{ text: 'child answer' }] }] },
      },
    ]);
    expect(kids.requests.map((request) => request.tools?.map((tool) => tool.name))).toEqual([['block']]);
  });

  it('a child that runs past the timeout is cancelled and the parent gets an error result', async () => {
    const kids = new ScriptedProvider({ provider: 'kids', fallback: { text: 'thinking', hang: true } });
    const f = await pluginFixture([{ toolCalls: [taskCall('A')] }, { text: 'moving on' }], {
      plugins: [subagentsPlugin({ provider: 'kids', model: 'kid-model', timeoutMs: 50 })],
      extraProviders: [kids],
    });
    const children: Agent[] = [];
    f.harness.hooks.on('agent/created', ({ agent }) => {
      if (agent.options.parent !== undefined) children.push(agent);
    });
    f.agent.followup('Delegate');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([{ error: { code: 'SUBAGENT_TIMEOUT' } }]);
    expect(dataOf(children[0]!, 'agent/cancelled')).toEqual([
      { cause: { kind: 'hook', reason: 'subagent timeout' } },
    ]);
    expect(dataOf(children[0]!, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('a cancel that lands while the child is being created never starts it', async () => {
    const kids = new ScriptedProvider({ provider: 'kids', fallback: { text: 'child answer' } });
    const f = await pluginFixture([{ toolCalls: [taskCall('A')] }], {
      plugins: [subagentsPlugin({ provider: 'kids', model: 'kid-model' })],
      extraProviders: [kids],
    });
    f.harness.hooks.on('agent/created', ({ agent }) => {
      if (agent.options.parent !== undefined) f.agent.cancel({ kind: 'user' });
    });
    f.agent.followup('Delegate');
    await waitForEvent(f.agent.session, (event) => event.type === 'turn/end');
    await f.agent.whenIdle();
    expect(kids.requests).toHaveLength(0);
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([{ error: { code: 'ABORTED' } }]);
    expect(f.harness.agents.list()).toEqual([f.agent]);
  });
});
