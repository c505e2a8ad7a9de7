import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Tool } from '../../src/internal.ts';
import { budgetsPlugin, defineTool, goalsPlugin, subagentsPlugin } from '../../src/internal.ts';
import { deferred } from '../../src/testing/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { raiseFor } from '../../web/src/budget-raise.ts';
import { Transcript, budgetRecordView, defaultRecordViews } from '../../src/internal.ts';
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
      // The page renders the notice after the session goes idle: poll rather than read once.
      await expect
        .poll(() => notices(page, 'budget/stopped'))
        .toEqual(['Stopped at the budget: the paused work was dropped.']);
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

describe('raising a paused budget', () => {
  it('doubles the paused limit with headroom above what was used, for the continue request', () => {
    // Which records pause and release a budget is the table's (test/transcript); this is the UI's raise.
    const transcript = new Transcript({ views: defaultRecordViews });
    transcript.apply({
      type: 'budget/reached',
      seq: 0,
      time: 0,
      data: { turn: 2, step: 4, limit: 'turn.costUsd', used: 0.25, max: 0.2 },
    });
    const paused = transcript.stateOf(budgetRecordView).paused;
    expect(paused).toEqual({ seq: 0, limit: 'turn.costUsd', used: 0.25, max: 0.2 });
    expect(raiseFor(paused!)).toEqual({ perTurn: { costUsd: 0.45 } });
    transcript.apply({
      type: 'budget/reached',
      seq: 1,
      time: 0,
      data: { turn: 3, step: 1, limit: 'session.tokens', used: 240, max: 200 },
    });
    expect(raiseFor(transcript.stateOf(budgetRecordView).paused!)).toEqual({ perSession: { tokens: 440 } });
  });
});
