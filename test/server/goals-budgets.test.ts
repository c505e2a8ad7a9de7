import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Tool } from '../../src/index.ts';
import {
  activeGoal,
  budgetsPlugin,
  defineTool,
  goalsPlugin,
  setGoal,
  subagentsPlugin,
} from '../../src/index.ts';
import type { ServerFixture } from './support.ts';
import { serverFixture, typesOf } from './support.ts';

/** A mutating tool that records what it wrote (no approval needed). */
function noteTool(written: string[]): Tool<never> {
  return defineTool<{ name: string }>({
    name: 'write_note',
    description: 'Write a note',
    effect: 'write',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    },
    execute: (args) => {
      written.push(args.name);
      return `wrote ${args.name}`;
    },
  }) as Tool<never>;
}

const usage = { inputTokens: 100, outputTokens: 20 };
const write = (name: string) => ({
  toolCalls: [{ id: `call_${name}`, name: 'write_note', arguments: { name } }],
  usage,
});

describe('server: goal and budget routes', () => {
  let f: ServerFixture;
  afterEach(async () => {
    await f.close();
  });

  function agentOf(id: string): Agent {
    return f.harness.agents.get(id)!;
  }

  async function newSession(): Promise<string> {
    const created = await f.api('POST', '/api/sessions', {});
    expect(created.status).toBe(201);
    return (created.json as { id: string }).id;
  }

  it('POST /goal sets the goal and runs it to completion; guards refuse without changing the log; DELETE clears', async () => {
    const written: string[] = [];
    f = await serverFixture(
      [
        { text: 'Starting on it.', usage },
        write('a'),
        { toolCalls: [{ id: 'call_done', name: 'goal_complete', arguments: { evidence: 'note a exists' } }] },
      ],
      { tools: [noteTool(written)] },
    );
    f.harness.use(goalsPlugin());
    f.harness.use(budgetsPlugin({}));
    f.harness.use(subagentsPlugin());
    const id = await newSession();
    const before = agentOf(id).session.events.length;
    const path = `/api/sessions/${id}/goal`;

    const missing = await f.api('POST', path, { objective: 'Write note a' }, { token: null });
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    const foreign = await f.api(
      'POST',
      path,
      { objective: 'x' },
      { headers: { origin: 'http://evil.example' } },
    );
    expect(foreign.status).toBe(403);
    const form = await f.api('POST', path, undefined, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'objective=x',
    });
    expect(form.status).toBe(415);
    const empty = await f.api('POST', path, { objective: '  ' });
    expect(empty.status).toBe(400);
    expect(empty.json).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    const rounds = await f.api('POST', path, { objective: 'x', maxRounds: -1 });
    expect(rounds.status).toBe(400);
    expect((await f.api('DELETE', path, undefined, { token: null })).status).toBe(401);
    expect(agentOf(id).session.events.length).toBe(before);
    expect(f.model.requests).toHaveLength(0);

    const set = await f.api('POST', path, { objective: 'Write note a' });
    expect(set.status).toBe(201);
    const goal = (
      set.json as { goal: { goalId: string; objective: string; maxRounds: number; rounds: number } }
    ).goal;
    expect(goal).toMatchObject({ objective: 'Write note a', maxRounds: 10, rounds: 0 });
    await agentOf(id).whenIdle();
    expect(written).toEqual(['a']);
    const types = typesOf(agentOf(id));
    expect(types.filter((type) => type.startsWith('goal/'))).toEqual([
      'goal/set',
      'goal/continued',
      'goal/completed',
    ]);
    expect(agentOf(id).session.eventsOfType('goal/completed')[0]!.data).toEqual({
      goalId: goal.goalId,
      callId: 'call_done',
      evidence: 'note a exists',
      rounds: 1,
    });
    expect(types.at(-1)).toBe('turn/end');

    // Nothing active: DELETE answers cleared false and writes nothing.
    const length = agentOf(id).session.events.length;
    expect((await f.api('DELETE', path)).json).toEqual({ cleared: false });
    expect(agentOf(id).session.events.length).toBe(length);
  });

  it('DELETE /goal stops an active goal as cleared', async () => {
    f = await serverFixture([], { tools: [] });
    f.harness.use(goalsPlugin());
    const id = await newSession();
    // A goal set without starting (SDK), then cleared from the browser.
    const goal = setGoal(agentOf(id), 'Tidy up', { start: false });
    const cleared = await f.api('DELETE', `/api/sessions/${id}/goal`);
    expect(cleared.json).toEqual({ cleared: true, goalId: goal.goalId });
    expect(
      agentOf(id)
        .session.eventsOfType('goal/stopped')
        .map((event) => event.data),
    ).toEqual([{ goalId: goal.goalId, reason: 'cleared', rounds: 0 }]);
    expect(activeGoal(agentOf(id))).toBeUndefined();
  });

  it('POST /budget/continue raises the reached limit and resumes the paused work; bad input changes nothing', async () => {
    const written: string[] = [];
    f = await serverFixture([write('w1'), write('w2'), { text: 'Both notes written.', usage }], {
      tools: [noteTool(written)],
    });
    f.harness.use(budgetsPlugin({ perSession: { tokens: 200 } }));
    const id = await newSession();
    expect((await f.api('POST', `/api/sessions/${id}/messages`, { text: 'Write two notes' })).status).toBe(
      202,
    );
    await agentOf(id).whenIdle();
    expect(written).toEqual(['w1', 'w2']);
    expect(
      agentOf(id)
        .session.eventsOfType('budget/reached')
        .map((event) => event.data),
    ).toEqual([{ turn: 1, step: 3, limit: 'session.tokens', used: 240, max: 200 }]);
    expect(f.model.requests).toHaveLength(2);

    const path = `/api/sessions/${id}/budget/continue`;
    const before = agentOf(id).session.events.length;
    const raise = { perSession: { tokens: 480 } };
    const missing = await f.api('POST', path, { raise }, { token: null });
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    const foreign = await f.api('POST', path, { raise }, { headers: { origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    for (const bad of [
      { raise: { perSession: { tokens: -5 } } },
      { raise: { perSession: { pages: 3 } } },
      { raise: { forever: { tokens: 3 } } },
      { raise: 'lots' },
    ]) {
      const answer = await f.api('POST', path, bad);
      expect(answer.status, JSON.stringify(bad)).toBe(400);
    }
    expect(agentOf(id).session.events.length).toBe(before);
    expect(f.model.requests).toHaveLength(2);

    const answer = await f.api('POST', path, { raise });
    expect(answer.status).toBe(202);
    expect((answer.json as { budget: { limits: unknown } }).budget.limits).toEqual({
      perTurn: {},
      perSession: { tokens: 480 },
    });
    await agentOf(id).whenIdle();
    expect(
      agentOf(id)
        .session.eventsOfType('budget/raised')
        .map((event) => event.data),
    ).toEqual([raise]);
    expect(
      agentOf(id)
        .session.eventsOfType('turn/end')
        .map((event) => event.data),
    ).toEqual([
      { turn: 1, reason: { kind: 'blocked' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    expect(f.model.requests).toHaveLength(3);
  });

  it('POST /budget/stop ends the paused work durably; with nothing paused it is refused and writes nothing', async () => {
    f = await serverFixture([write('w1'), write('w2'), { text: 'never requested' }], {
      tools: [noteTool([])],
    });
    f.harness.use(budgetsPlugin({ perSession: { tokens: 200 } }));
    const id = await newSession();
    const path = `/api/sessions/${id}/budget/stop`;
    const early = await f.api('POST', path, {});
    expect(early.status).toBe(409);
    expect(early.json).toMatchObject({ error: { code: 'NOTHING_PAUSED' } });
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'Write two notes' });
    await agentOf(id).whenIdle();
    const [reached] = agentOf(id).session.eventsOfType('budget/reached');
    expect(reached).toBeDefined();

    const stopped = await f.api('POST', path, {});
    expect(stopped.status).toBe(200);
    expect(stopped.json).toMatchObject({ reachedSeq: reached!.seq });
    const session = agentOf(id).session;
    expect(session.events.at(-1)).toMatchObject({
      type: 'budget/stopped',
      data: { reachedSeq: reached!.seq },
    });
    expect(agentOf(id).inbox.size()).toBe(0);
    const before = session.events.length;
    const again = await f.api('POST', path, {});
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: { code: 'NOTHING_PAUSED' } });
    expect(session.events.length).toBe(before);
    expect(f.model.requests).toHaveLength(2);
  });

  it('answers 501 when the plugins are not installed, and 409 while the agent runs, writing nothing', async () => {
    f = await serverFixture([{ text: 'never finishes', hang: true }], { tools: [] });
    const id = await newSession();
    const before = agentOf(id).session.events.length;
    const goal = await f.api('POST', `/api/sessions/${id}/goal`, { objective: 'x' });
    expect(goal.status).toBe(501);
    expect(goal.json).toMatchObject({ error: { code: 'GOALS_NOT_INSTALLED' } });
    const budget = await f.api('POST', `/api/sessions/${id}/budget/continue`, {});
    expect(budget.status).toBe(501);
    expect(budget.json).toMatchObject({ error: { code: 'BUDGETS_NOT_INSTALLED' } });
    const stop = await f.api('POST', `/api/sessions/${id}/budget/stop`, {});
    expect(stop.status).toBe(501);
    expect(stop.json).toMatchObject({ error: { code: 'BUDGETS_NOT_INSTALLED' } });
    expect(agentOf(id).session.events.length).toBe(before);

    f.harness.use(budgetsPlugin({}));
    agentOf(id).followup('go');
    const busy = await f.api('POST', `/api/sessions/${id}/budget/continue`, {
      raise: { perTurn: { steps: 5 } },
    });
    expect(busy.status).toBe(409);
    expect(busy.json).toMatchObject({ error: { code: 'AGENT_BUSY' } });
    const busyStop = await f.api('POST', `/api/sessions/${id}/budget/stop`, {});
    expect(busyStop.status).toBe(409);
    expect(busyStop.json).toMatchObject({ error: { code: 'AGENT_BUSY' } });
    agentOf(id).cancel({ kind: 'user' });
    await agentOf(id).whenIdle();
    expect(agentOf(id).session.eventsOfType('budget/raised')).toEqual([]);
  });
});
