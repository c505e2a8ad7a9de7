import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Tool } from '../../src/index.ts';
import { budgetsPlugin, defineTool, goalsPlugin, subagentsPlugin } from '../../src/index.ts';
import { deferred } from '../../src/testing/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { raiseFor } from '../../web/src/budget-raise.ts';
import { Transcript } from '../../web/src/transcript.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

/** A mutating tool that records its writes; a write may be held until the test releases it. */
function noteTool(written: string[], gate?: Promise<void>): Tool<never> {
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
    execute: async (args) => {
      if (gate !== undefined) await gate;
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

function notices(page: Page, type: string): Promise<string[]> {
  return page.locator(`[data-testid="plugin-notice"][data-notice="${type}"]`).allTextContents();
}

describe.skipIf(!hasChromium)('Web UI: goals, budgets and subagents in a real browser', () => {
  const shared = browserSuite();
  let f: ServerFixture;
  afterEach(async () => {
    await f?.close();
  });

  function onlyAgent(): Agent {
    const [agent] = f.harness.agents.list();
    return agent!;
  }

  async function submit(page: Page, text: string): Promise<void> {
    await page.getByTestId('composer-input').fill(text);
    await page.getByTestId('composer-input').press('Enter');
  }

  it(
    '/goal → the header shows the goal → continued rounds → completed notice, header cleared',
    async () => {
      const written: string[] = [];
      const gate = deferred();
      f = await serverFixture(
        [
          { text: 'Looking around.' },
          write('a'),
          { text: 'Wrote note a.' },
          {
            toolCalls: [{ id: 'call_done', name: 'goal_complete', arguments: { evidence: 'note a exists' } }],
          },
        ],
        { tools: [noteTool(written, gate.promise)], server: { webRoot: shared.webRoot } },
      );
      f.harness.use(goalsPlugin());
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, '/goal Write note a');

      // The write is held, so the goal is certainly still active while we look at the header.
      const header = page.getByTestId('active-goal');
      await header.waitFor();
      expect(await header.textContent()).toContain('Write note a');
      await expect.poll(() => page.getByTestId('goal-rounds').textContent()).toBe('round 1 of 10');
      gate.resolve();

      await page.locator('[data-testid="plugin-notice"][data-notice="goal/completed"]').waitFor();
      await header.waitFor({ state: 'detached' });
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      expect(await notices(page, 'goal/set')).toEqual([
        'Goal set: Write note a (up to 10 continuation rounds)',
      ]);
      expect(await notices(page, 'goal/continued')).toEqual([
        'Goal not yet complete — continuation round 1 of 10',
        'Goal not yet complete — continuation round 2 of 10',
      ]);
      expect(await notices(page, 'goal/completed')).toEqual([
        'Goal completed after 2 continuation rounds: note a exists',
      ]);
      // The composer sent no literal "/goal" message: the objective went in as the goal's prompt.
      const userTexts = await page.getByTestId('user-message').allTextContents();
      expect(userTexts[0]).toContain('Goal: Write note a');
      expect(userTexts.some((text) => text.includes('/goal'))).toBe(false);

      const agent = onlyAgent();
      await agent.whenIdle();
      expect(written).toEqual(['a']);
      expect(
        agent.session.events.map((event) => event.type).filter((type) => type.startsWith('goal/')),
      ).toEqual(['goal/set', 'goal/continued', 'goal/continued', 'goal/completed']);
      expect(agent.session.eventsOfType('turn/end').map((event) => event.data.reason)).toEqual([
        { kind: 'completed' },
      ]);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    '"Clear goal" stops the active goal and the transcript says so',
    async () => {
      const gate = deferred();
      f = await serverFixture([write('x'), { text: 'Done with x.' }], {
        tools: [noteTool([], gate.promise)],
        server: { webRoot: shared.webRoot },
      });
      f.harness.use(goalsPlugin());
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, '/goal Write note x');
      await page.getByTestId('active-goal').waitFor();
      await page.getByTestId('clear-goal').click();
      await page.locator('[data-testid="plugin-notice"][data-notice="goal/stopped"]').waitFor();
      await page.getByTestId('active-goal').waitFor({ state: 'detached' });
      expect(await notices(page, 'goal/stopped')).toEqual(['Goal cleared']);
      gate.resolve();
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      const agent = onlyAgent();
      await agent.whenIdle();
      // Cleared before the model stopped: no continuation round followed.
      expect(agent.session.eventsOfType('goal/continued')).toEqual([]);
      expect(agent.session.eventsOfType('goal/stopped').map((event) => event.data.reason)).toEqual([
        'cleared',
      ]);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'a budget reached → the banner → "Raise limit and continue" completes the work',
    async () => {
      const written: string[] = [];
      f = await serverFixture([write('w1'), write('w2'), { text: 'Both notes written.', usage }], {
        tools: [noteTool(written)],
        server: { webRoot: shared.webRoot },
      });
      f.harness.use(budgetsPlugin({ perSession: { tokens: 200 } }));
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, 'Write two notes');

      const banner = page.getByTestId('budget-banner');
      await banner.waitFor();
      expect(await banner.textContent()).toContain('Budget reached: session tokens — used 240 of 200');
      expect(await banner.textContent()).toContain('Raise it to 440');
      expect(await notices(page, 'budget/reached')).toEqual([
        'Budget reached: session tokens — used 240 of 200. The work is paused.',
      ]);
      expect(await page.locator('[data-testid="turn-end"][data-turn-end="blocked"]').count()).toBe(1);
      expect(f.model.requests).toHaveLength(2);

      await banner.getByRole('button', { name: 'Raise limit and continue' }).click();
      await banner.waitFor({ state: 'detached' });
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      expect(await page.getByTestId('assistant-message').last().textContent()).toContain(
        'Both notes written.',
      );
      expect(await notices(page, 'budget/raised')).toEqual(['Budget raised: session tokens → 440']);
      // Reloading renders the same log: the banner does not come back for work already resumed.
      await page.reload();
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      expect(await page.getByTestId('budget-banner').count()).toBe(0);

      const agent = onlyAgent();
      await agent.whenIdle();
      expect(written).toEqual(['w1', 'w2']);
      expect(agent.session.eventsOfType('budget/raised').map((event) => event.data)).toEqual([
        { perSession: { tokens: 440 } },
      ]);
      expect(agent.session.eventsOfType('turn/end').map((event) => event.data.reason)).toEqual([
        { kind: 'blocked' },
        { kind: 'completed' },
      ]);
      expect(f.model.requests).toHaveLength(3);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'a budget reached → "Stop" ends the paused work: recorded, nothing queued or requested, gone after a reload',
    async () => {
      f = await serverFixture([write('w1'), write('w2'), { text: 'never requested' }], {
        tools: [noteTool([])],
        server: { webRoot: shared.webRoot },
      });
      f.harness.use(budgetsPlugin({ perSession: { tokens: 200 } }));
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, 'Write two notes');
      const banner = page.getByTestId('budget-banner');
      await banner.waitFor();
      const agent = onlyAgent();
      await agent.whenIdle();
      await banner.getByRole('button', { name: 'Stop' }).click();
      await banner.waitFor({ state: 'detached' });
      await expect.poll(() => agent.session.eventsOfType('budget/stopped').length).toBe(1);
      const [reached] = agent.session.eventsOfType('budget/reached');
      expect(agent.session.eventsOfType('budget/stopped')[0]!.data).toEqual({ reachedSeq: reached!.seq });
      await expect.poll(() => agent.inbox.size()).toBe(0);
      expect(agent.status).toBe('idle');
      expect(agent.session.eventsOfType('budget/raised')).toEqual([]);
      expect(await notices(page, 'budget/stopped')).toEqual([
        'Stopped at the budget: the paused work was dropped.',
      ]);
      // The stop is in the log: a reload renders the same transcript without offering the pause again.
      await page.reload();
      await page.locator('[data-testid="turn-end"][data-turn-end="blocked"]').waitFor();
      expect(await notices(page, 'budget/stopped')).toHaveLength(1);
      expect(await page.getByTestId('budget-banner').count()).toBe(0);
      expect(agent.session.eventsOfType('turn/end').map((event) => event.data.reason)).toEqual([
        { kind: 'blocked' },
      ]);
      expect(f.model.requests).toHaveLength(2);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    "a task tool card opens the child's stored session",
    async () => {
      f = await serverFixture(
        [
          { toolCalls: [{ id: 'call_task', name: 'task', arguments: { prompt: 'Count the files' } }] },
          { text: 'There are three files.' },
          { text: 'The subagent counted three files.' },
        ],
        { tools: [], server: { webRoot: shared.webRoot } },
      );
      f.harness.use(subagentsPlugin());
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, 'How many files?');
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      const parentUrl = page.url();
      const open = page.getByTestId('open-child-session');
      await open.waitFor();
      await open.click();
      await expect.poll(() => page.url()).not.toBe(parentUrl);
      await expect
        .poll(() => page.getByTestId('assistant-message').last().textContent())
        .toContain('There are three files.');
      expect(await page.getByTestId('user-message').first().textContent()).toContain('Count the files');
      const stored = await f.harness.store.list();
      const child = stored.find((summary) => summary.parentSession !== undefined);
      expect(child).toBeDefined();
      expect(decodeURIComponent(page.url())).toContain(`#/s/${child!.id}`);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );
});

describe('transcript fold of plugin records', () => {
  it('explains every goal stop reason, the guard stop with its count, and budget records', () => {
    const transcript = new Transcript();
    const records: [string, unknown][] = [
      ['goal/set', { goalId: 'g1', objective: 'Ship it', maxRounds: 3 }],
      ['goal/continued', { goalId: 'g1', round: 1 }],
      ['goal/stopped', { goalId: 'g1', reason: 'no-progress', rounds: 1 }],
      ['goal/set', { goalId: 'g2', objective: 'Again', maxRounds: 3 }],
      ['goal/stopped', { goalId: 'g2', reason: 'round-limit', rounds: 3 }],
      ['goal/set', { goalId: 'g3', objective: 'Once more', maxRounds: 3 }],
      ['goal/stopped', { goalId: 'g3', reason: 'cancelled', rounds: 0 }],
      [
        'guard/stopped',
        {
          turn: 1,
          fingerprint: 'write_note#abc',
          count: 5,
          name: 'write_note',
          message: 'Stopped a loop of identical calls.',
        },
      ],
      ['budget/reached', { turn: 2, step: 4, limit: 'turn.costUsd', used: 0.25, max: 0.2 }],
      ['budget/raised', { perTurn: { costUsd: 0.5, steps: null } }],
    ];
    records.forEach(([type, data], seq) => transcript.apply({ type, seq, time: 0, data }));
    const texts = transcript.items.map((item) => (item.kind === 'notice' ? item.text : item.kind));
    expect(texts).toEqual([
      'Goal set: Ship it (up to 3 continuation rounds)',
      'Goal not yet complete — continuation round 1 of 3',
      'Goal stopped: the last round made no progress (no tool effects and nothing new said)',
      'Goal set: Again (up to 3 continuation rounds)',
      'Goal stopped: it used all 3 continuation rounds without being completed',
      'Goal set: Once more (up to 3 continuation rounds)',
      'Goal stopped: the turn was stopped',
      'Repetition guard stopped the turn: write_note was called 5 times with identical arguments. Stopped a loop of identical calls.',
      'Budget reached: per-turn cost — used $0.2500 of $0.2000. The work is paused.',
      'Budget raised: per-turn cost → $0.5000, per-turn steps → unlimited',
    ]);
    expect(transcript.activeGoal).toBeUndefined();
    expect(transcript.pausedBudget).toEqual({ seq: 8, limit: 'turn.costUsd', used: 0.25, max: 0.2 });
    expect(raiseFor(transcript.pausedBudget!)).toEqual({ perTurn: { costUsd: 0.45 } });
    transcript.apply({ type: 'turn/start', seq: 10, time: 0, data: { turn: 3 } });
    expect(transcript.pausedBudget).toBeUndefined();
  });
});
