import { describe, expect, it } from 'vitest';
import type { UserMessage } from '../../../src/index.ts';
import { activeGoal, clearGoal, goalsPlugin, setGoal } from '../../../src/index.ts';
import { waitForEvent } from '../../../src/testing/index.ts';
import { dataOf, plotOf, pluginFixture, writeTool } from './plugin-fixture.ts';

const complete = (evidence: string) => ({
  toolCalls: [{ id: 'call_done', name: 'goal_complete', arguments: { evidence } }],
});

describe('goals', () => {
  it('a goal completed in three rounds: three goal/continued, then goal/completed, turn completed', async () => {
    const f = await pluginFixture(
      [{ text: 'round 0' }, { text: 'round 1' }, { text: 'round 2' }, complete('all tests pass')],
      { plugins: [goalsPlugin()] },
    );
    const goal = setGoal(f.agent, 'Make the tests pass');
    await f.agent.whenIdle();

    expect(plotOf(f.agent)).toEqual(
      [
        'goal/set',
        'agent/inbox/spliced',
        'turn/start',
        'agent/inbox/spliced',
        'step/start',
        'user/message',
        'assistant/message',
        'step/end',
        ...[1, 2, 3].flatMap(() => [
          'goal/continued',
          'agent/inbox/spliced', // the continuation is steered…
          'agent/inbox/spliced', // …and claimed at the next step boundary
          'step/start',
          'user/message',
          'assistant/message',
          'step/end',
        ]),
      ]
        .slice(0, -1)
        .concat(['tool/call', 'tool/result', 'goal/completed', 'step/end', 'turn/end']),
    );
    expect(dataOf(f.agent, 'goal/set')).toEqual([
      { goalId: goal.goalId, objective: 'Make the tests pass', maxRounds: 10 },
    ]);
    expect(dataOf(f.agent, 'goal/continued')).toEqual([
      { goalId: goal.goalId, round: 1 },
      { goalId: goal.goalId, round: 2 },
      { goalId: goal.goalId, round: 3 },
    ]);
    expect(dataOf(f.agent, 'goal/completed')).toEqual([
      { goalId: goal.goalId, callId: 'call_done', evidence: 'all tests pass', rounds: 3 },
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    const sources = dataOf<UserMessage>(f.agent, 'user/message').map((message) => message.source);
    expect(sources).toEqual([
      { kind: 'goal', goalId: goal.goalId, form: 'objective' },
      { kind: 'goal', goalId: goal.goalId, round: 1 },
      { kind: 'goal', goalId: goal.goalId, round: 2 },
      { kind: 'goal', goalId: goal.goalId, round: 3 },
    ]);
    expect(f.model.requests).toHaveLength(4);
    expect(activeGoal(f.agent)).toBeUndefined();
    expect(f.listenerErrors).toEqual([]);
  });

  it('a model that never calls goal_complete stops at the round limit', async () => {
    const f = await pluginFixture([], {
      plugins: [goalsPlugin({ maxRounds: 3 })],
      fallback: (_request, call) => ({ text: `attempt ${call}` }),
    });
    const goal = setGoal(f.agent, 'Refactor the parser');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'goal/continued').map((data) => (data as { round: number }).round)).toEqual([
      1, 2, 3,
    ]);
    expect(dataOf(f.agent, 'goal/stopped')).toEqual([
      { goalId: goal.goalId, reason: 'round-limit', rounds: 3 },
    ]);
    expect(plotOf(f.agent).slice(-4)).toEqual(['assistant/message', 'step/end', 'goal/stopped', 'turn/end']);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    expect(f.model.requests).toHaveLength(4);
    expect(activeGoal(f.agent)).toBeUndefined();
  });

  it('a round that makes no progress stops the goal at once', async () => {
    const f = await pluginFixture([], {
      plugins: [goalsPlugin()],
      fallback: { text: 'I am working on it.' },
    });
    const goal = setGoal(f.agent, 'Ship the release');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'goal/continued')).toEqual([{ goalId: goal.goalId, round: 1 }]);
    expect(dataOf(f.agent, 'goal/stopped')).toEqual([
      { goalId: goal.goalId, reason: 'no-progress', rounds: 1 },
    ]);
    expect(f.model.requests).toHaveLength(2);
  });

  it('a round whose only work is a successful tool call counts as progress', async () => {
    const writes: string[] = [];
    const f = await pluginFixture(
      [
        { text: 'Starting.' },
        { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'a.txt' } }] },
        { text: 'Starting.' },
        { text: 'Starting.' },
      ],
      { plugins: [goalsPlugin()], tools: [writeTool(writes)] },
    );
    const goal = setGoal(f.agent, 'Write a.txt');
    await f.agent.whenIdle();
    // Round 1 wrote a file (progress) and then repeated itself; round 2 only repeated itself.
    expect(writes).toEqual(['a.txt']);
    expect(dataOf(f.agent, 'goal/continued')).toHaveLength(2);
    expect(dataOf(f.agent, 'goal/stopped')).toEqual([
      { goalId: goal.goalId, reason: 'no-progress', rounds: 2 },
    ]);
  });

  it('Stop while a goal is active: aborted, the goal stopped, no further round', async () => {
    const f = await pluginFixture([{ text: 'round 0' }, { text: 'thinking', hang: true }], {
      plugins: [goalsPlugin()],
    });
    const goal = setGoal(f.agent, 'Keep going');
    await waitForEvent(
      f.agent.session,
      (event) => event.type === 'assistant/chunk' && (event.data as { step: number }).step === 2,
    );
    f.agent.cancel({ kind: 'user' });
    await f.agent.whenIdle();
    expect(plotOf(f.agent).slice(-5)).toEqual([
      'agent/cancelled',
      'goal/stopped',
      'assistant/message', // the interrupted prefix
      'step/end',
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'goal/stopped')).toEqual([
      { goalId: goal.goalId, reason: 'cancelled', rounds: 1 },
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(dataOf(f.agent, 'goal/continued')).toHaveLength(1);
    expect(f.model.requests).toHaveLength(2);
    expect(activeGoal(f.agent)).toBeUndefined();
  });

  it('goal_complete without an active goal is an error result, and completes nothing', async () => {
    const f = await pluginFixture([complete('done'), { text: 'ok' }], { plugins: [goalsPlugin()] });
    f.agent.followup('Finish');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([
      { error: { code: 'NO_ACTIVE_GOAL' }, message: { content: [{ isError: true }] } },
    ]);
    expect(dataOf(f.agent, 'goal/completed')).toEqual([]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('setting a new goal replaces the old one; clearing stops it; turns begun before the goal are not continued', async () => {
    const f = await pluginFixture([{ text: 'hello' }], { plugins: [goalsPlugin()] });
    const first = setGoal(f.agent, 'First', { start: false });
    const second = setGoal(f.agent, 'Second', { start: false, maxRounds: 2 });
    expect(activeGoal(f.agent)).toEqual({
      goalId: second.goalId,
      objective: 'Second',
      maxRounds: 2,
      rounds: 0,
    });
    expect(clearGoal(f.agent)).toBe(true);
    expect(clearGoal(f.agent)).toBe(false);
    expect(dataOf(f.agent, 'goal/stopped')).toEqual([
      { goalId: first.goalId, reason: 'replaced', rounds: 0 },
      { goalId: second.goalId, reason: 'cleared', rounds: 0 },
    ]);

    // A goal set while a turn runs governs later turns only.
    const g = await pluginFixture([{ text: 'answer', delayMs: 5 }, { text: 'round 1' }, complete('done')], {
      plugins: [goalsPlugin()],
    });
    g.agent.followup('Question');
    const goal = setGoal(g.agent, 'Later goal', { start: false });
    await g.agent.whenIdle();
    expect(dataOf(g.agent, 'goal/continued')).toEqual([]);
    expect(activeGoal(g.agent)?.goalId).toBe(goal.goalId);
  });

  it('rejects configurations that could loop forever and agents it does not govern', async () => {
    expect(() => goalsPlugin({ maxRounds: Number.POSITIVE_INFINITY })).toThrow(
      expect.objectContaining({ code: 'INVALID_GOAL' }),
    );
    const f = await pluginFixture([], { plugins: [goalsPlugin()] });
    expect(() => setGoal(f.agent, 'x', { maxRounds: -1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_GOAL' }),
    );
    expect(() => setGoal(f.agent, '   ')).toThrow(expect.objectContaining({ code: 'INVALID_GOAL' }));
    const bare = await pluginFixture([]);
    expect(() => setGoal(bare.agent, 'x')).toThrow(expect.objectContaining({ code: 'GOALS_NOT_INSTALLED' }));
    expect(bare.agent.session.events).toEqual([]);
  });

  it('the active goal survives a resume', async () => {
    const f = await pluginFixture([], { plugins: [goalsPlugin()] });
    const goal = setGoal(f.agent, 'Persist me', { start: false });
    const id = f.agent.id;
    await f.agent.dispose();
    const resumed = await f.harness.resumeAgent(id);
    expect(activeGoal(resumed)).toEqual({
      goalId: goal.goalId,
      objective: 'Persist me',
      maxRounds: 10,
      rounds: 0,
    });
  });
});
