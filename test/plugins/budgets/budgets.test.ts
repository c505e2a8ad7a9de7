import { describe, expect, it } from 'vitest';
import type { UserMessage } from '../../../src/index.ts';
import {
  activeGoal,
  budgetUsage,
  goalsPlugin,
  setGoal,
  budgetsPlugin,
  continueAfterBudget,
  messageText,
  raiseBudget,
  subagentsPlugin,
} from '../../../src/index.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';
import { dataOf, plotOf, pluginFixture, writeTool } from '../goals/plugin-fixture.ts';

const usage = { inputTokens: 100, outputTokens: 20 };
const write = (id: string) => ({
  toolCalls: [{ id, name: 'write_file', arguments: { path: `${id}.txt` } }],
  usage,
});

const texts = (messages: readonly UserMessage[]) => messages.map((message) => messageText(message));

describe('budgets', () => {
  it('a budget reached mid-turn: the step finishes, budget/reached, no further request; raise + continue completes', async () => {
    const writes: string[] = [];
    const f = await pluginFixture([write('w1'), write('w2'), { text: 'All files written.', usage }], {
      plugins: [budgetsPlugin({ perSession: { tokens: 200 } })],
      tools: [writeTool(writes)],
    });
    f.agent.followup('Write two files');
    await f.agent.whenIdle();

    // Step 2 crossed the limit (240 ≥ 200) and still ran its tool; step 3 was never requested.
    expect(writes).toEqual(['w1.txt', 'w2.txt']);
    expect(f.model.requests).toHaveLength(2);
    expect(plotOf(f.agent).slice(-6)).toEqual([
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'budget/reached',
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'budget/reached')).toEqual([
      { turn: 1, step: 3, limit: 'session.tokens', used: 240, max: 200 },
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'blocked' } }]);
    expect(budgetUsage(f.agent)).toEqual({
      limits: { perTurn: {}, perSession: { tokens: 200 } },
      used: { turn: { tokens: 240, costUsd: 0, steps: 2 }, session: { tokens: 240, costUsd: 0, steps: 2 } },
      costComplete: false,
    });

    const report = raiseBudget(f.agent, { perSession: { tokens: 1000 } }, { continue: true });
    expect(report.limits.perSession).toEqual({ tokens: 1000 });
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'budget/raised')).toEqual([{ perSession: { tokens: 1000 } }]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'blocked' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    // The resumed request carries the whole history (both tool results) plus the continuation note.
    const resumed = f.model.requests[2]!.messages;
    expect(resumed.filter((message) => message.source.kind === 'tool')).toHaveLength(2);
    expect(resumed.at(-1)).toMatchObject({ source: { kind: 'plugin', plugin: 'budgets', form: 'continue' } });
    expect(f.listenerErrors).toEqual([]);
  });

  it('a per-turn cost limit, priced from the adapter, pauses; continuing gives the new turn a fresh budget', async () => {
    const f = await pluginFixture([write('w1'), write('w2'), { text: 'Done.', usage }], {
      plugins: [budgetsPlugin({ perTurn: { costUsd: 0.2 } })],
      tools: [writeTool()],
      models: { 'test-model': { pricing: { input: 1000, output: 1000 } } },
    });
    f.agent.followup('Write');
    await f.agent.whenIdle();
    const [reached] = dataOf<{ limit: string; used: number; max: number }>(f.agent, 'budget/reached');
    expect(reached!.limit).toBe('turn.costUsd');
    expect(reached!.used).toBeCloseTo(0.24, 10);
    expect(f.model.requests).toHaveLength(2);
    expect(budgetUsage(f.agent).costComplete).toBe(true);

    continueAfterBudget(f.agent);
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'blocked' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    expect(f.model.requests).toHaveLength(3);
  });

  it('a session limit reached before a turn starts keeps the prompt; queued follow-ups run after the resumed work', async () => {
    const f = await pluginFixture([{ text: 'one' }, { text: 'two' }, { text: 'three' }], {
      plugins: [budgetsPlugin({ perSession: { steps: 1 } })],
    });
    f.agent.followup('first');
    await f.agent.whenIdle();
    f.agent.followup('second');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'budget/reached')).toEqual([
      { turn: 2, step: 1, limit: 'session.steps', used: 1, max: 1 },
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'completed' } },
      { turn: 2, reason: { kind: 'blocked' } },
    ]);
    expect(texts(f.agent.inbox.list('next-step'))).toEqual(['second']);

    // Queued without waking while paused: it must not ride along with the resumed work.
    f.agent.send('third', 'next-turn', false);
    raiseBudget(f.agent, { perSession: { steps: null } }, { continue: true });
    await f.agent.whenIdle();
    const entered = dataOf<UserMessage>(f.agent, 'user/message');
    expect(texts(entered)).toEqual([
      'first',
      'second',
      'The budget was raised. Continue the work where you left off.',
      'third',
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'completed' } },
      { turn: 2, reason: { kind: 'blocked' } },
      { turn: 3, reason: { kind: 'completed' } },
      { turn: 4, reason: { kind: 'completed' } },
    ]);
    expect(f.agent.inbox.size()).toBe(0);
  });

  it('per-turn step limits and limits kept in the log across a resume', async () => {
    const f = await pluginFixture([write('w1'), write('w2'), { text: 'x', usage }], {
      plugins: [budgetsPlugin({ perTurn: { steps: 2 } })],
      tools: [writeTool()],
    });
    raiseBudget(f.agent, { perTurn: { steps: 1 } });
    f.agent.followup('Go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'budget/reached')).toEqual([
      { turn: 1, step: 2, limit: 'turn.steps', used: 1, max: 1 },
    ]);
    const id = f.agent.id;
    await f.agent.dispose();
    const resumed = await f.harness.resumeAgent(id);
    expect(budgetUsage(resumed).limits.perTurn).toEqual({ steps: 1 });
  });

  it("a subagent's spend, reported in its task result, counts against the parent's budget", async () => {
    const kids = new ScriptedProvider({ provider: 'kids', fallback: { text: 'child report', usage } });
    const f = await pluginFixture(
      [
        {
          toolCalls: [{ id: 't1', name: 'task', arguments: { prompt: 'look around' } }],
          usage: { inputTokens: 10, outputTokens: 2 },
        },
        { text: 'never sent' },
      ],
      {
        plugins: [
          budgetsPlugin({ perSession: { tokens: 100 } }),
          subagentsPlugin({ provider: 'kids', model: 'kid-model' }),
        ],
        extraProviders: [kids],
      },
    );
    f.agent.followup('Delegate');
    await f.agent.whenIdle();
    expect(kids.requests).toHaveLength(1);
    expect(dataOf(f.agent, 'budget/reached')).toEqual([
      { turn: 1, step: 2, limit: 'session.tokens', used: 132, max: 100 },
    ]);
    expect(f.model.requests).toHaveLength(1);
  });

  it('rejects invalid limits, agents it does not govern, and continuing a running agent', async () => {
    expect(() => budgetsPlugin({ perTurn: { steps: 1.5 } })).toThrow(
      expect.objectContaining({ code: 'INVALID_BUDGET' }),
    );
    expect(() => budgetsPlugin({ perSession: { costUsd: -1 } })).toThrow(
      expect.objectContaining({ code: 'INVALID_BUDGET' }),
    );
    const f = await pluginFixture([{ text: 'slow', delayMs: 5 }], { plugins: [budgetsPlugin({})] });
    expect(() => raiseBudget(f.agent, { perTurn: { tokens: Number.NaN } })).toThrow(
      expect.objectContaining({ code: 'INVALID_BUDGET' }),
    );
    f.agent.followup('hi');
    expect(() => continueAfterBudget(f.agent)).toThrow(expect.objectContaining({ code: 'AGENT_BUSY' }));
    await f.agent.whenIdle();
    const bare = await pluginFixture([]);
    expect(() => raiseBudget(bare.agent, {})).toThrow(
      expect.objectContaining({ code: 'BUDGETS_NOT_INSTALLED' }),
    );
  });
});

describe('budgets with goals', () => {
  it('a goal continuation blocked by a budget stays queued, and continuing completes the goal', async () => {
    const f = await pluginFixture(
      [
        { text: 'Started.', usage },
        {
          toolCalls: [{ id: 'done', name: 'goal_complete', arguments: { evidence: 'checked' } }],
          usage,
        },
      ],
      { plugins: [goalsPlugin(), budgetsPlugin({ perTurn: { steps: 1 } })] },
    );
    const goal = setGoal(f.agent, 'Finish the job');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'goal/continued')).toEqual([{ goalId: goal.goalId, round: 1 }]);
    expect(dataOf(f.agent, 'budget/reached')).toEqual([
      { turn: 1, step: 2, limit: 'turn.steps', used: 1, max: 1 },
    ]);
    expect(activeGoal(f.agent)?.goalId).toBe(goal.goalId);
    expect(f.agent.inbox.list('next-step').map((message) => message.source)).toEqual([
      { kind: 'goal', goalId: goal.goalId, round: 1 },
    ]);

    continueAfterBudget(f.agent);
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'goal/completed')).toMatchObject([{ goalId: goal.goalId, evidence: 'checked' }]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'blocked' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    expect(f.model.requests[1]!.messages.slice(-2).map((message) => message.source.kind)).toEqual([
      'goal',
      'plugin',
    ]);
  });
});
