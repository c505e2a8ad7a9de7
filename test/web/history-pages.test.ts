import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/index.ts';
import type { ScriptedResponse } from '../../src/testing/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { listFilesTool, runParts, toolTurnReply } from './tool-turn-session.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

const turns = 40;
const stepsPerTurn = 12;

// A session longer than one history page (`GET /events?tail=…`): the page opens from its last turns,
// fetches earlier pages as the person scrolls up (what is on screen stays put), and the live stream
// still arrives at the bottom. Untimed: the speed is measured by `npm run bench:web`.
describe.skipIf(!hasChromium)('Web UI history pages', () => {
  const shared = browserSuite();
  let f: ServerFixture | undefined;
  let agent: Agent | undefined;
  beforeAll(async () => {
    const listFiles = listFilesTool();
    let call = 0;
    f = await serverFixture([], {
      tools: [listFiles],
      server: { webRoot: shared.webRoot },
      fallback: (): ScriptedResponse => {
        return toolTurnReply(call++, stepsPerTurn);
      },
    });
    agent = await f.harness.createAgent({ id: 'paged', provider: 'scripted', model: 'test-model' });
    await runParts(agent, turns);
  }, browserTestTimeout);
  afterAll(async () => {
    await f?.close();
  });

  it(
    'opens at the last turns, pages back to the first in order while the view stays put, and follows live events',
    async () => {
      expect(agent!.session.events.length).toBeGreaterThan(3 * 1500);
      const { page, problems } = await openPage(shared.context, 'about:blank');
      const historyRequests: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/events?')) historyRequests.push(new URL(request.url()).search);
      });
      await page.goto(`${f!.server.url}#/s/paged`);
      const scroller = page.getByTestId('scroller');
      const lastEnd = page.getByTestId('turn-end').last();
      await expect.poll(() => lastEnd.textContent()).toBe(`Turn ${turns} completed`);
      await expect.poll(() => lastEnd.isVisible()).toBe(true);
      // Opened from a tail page: one request, for the last turns only.
      expect(historyRequests).toEqual(['?tail=1500']);
      const userTexts = (): Promise<string[]> =>
        page.getByTestId('user-message').evaluateAll((nodes) => nodes.map((node) => node.textContent ?? ''));
      const shownParts = (): Promise<number[]> =>
        userTexts().then((texts) => texts.map((text) => Number(/Part (\d+)/.exec(text)?.[1])));
      const opened = await shownParts();
      expect(opened.at(-1)).toBe(turns);
      expect(opened[0]).toBeGreaterThan(1);
      await page.getByTestId('load-earlier').waitFor();

      // Scroll to the top until turn 1 is in: each load keeps the row that was first where it was.
      for (let attempt = 0; attempt < 100 && !(await shownParts()).includes(1); attempt++) {
        const before = (await shownParts())[0]!;
        const rowTop = await scroller.evaluate((element) => {
          element.scrollTop = 0;
          const row = element.querySelector('[data-testid="transcript"] > :not(.load-earlier)')!;
          row.setAttribute('data-watched', String(Date.now()));
          return row.getBoundingClientRect().top;
        });
        await expect.poll(async () => (await shownParts())[0]).toBeLessThan(before);
        const watched = page.locator('[data-watched]');
        expect(await watched.count()).toBe(1);
        const shift = (await watched.evaluate((row) => row.getBoundingClientRect().top)) - rowTop;
        expect(Math.abs(shift)).toBeLessThanOrEqual(2);
        await watched.evaluate((row) => row.removeAttribute('data-watched'));
      }
      // Every turn exactly once, in order: no gap and no duplicate where pages meet.
      const all = Array.from({ length: turns }, (_, index) => index + 1);
      expect(await shownParts()).toEqual(all);
      const dividers = await page
        .locator('.turn-divider')
        .evaluateAll((nodes) => nodes.map((node) => node.textContent));
      expect(dividers).toEqual(all.map((turn) => `Turn ${turn}`));
      expect(await page.getByTestId('tool-card').count()).toBe(turns * stepsPerTurn);
      expect(await page.getByTestId('load-earlier').count()).toBe(0);
      expect(historyRequests.length).toBeGreaterThan(2);
      expect(historyRequests.slice(1).every((search) => /^\?tail=1500&before=\d+$/.test(search))).toBe(true);

      // Live events still arrive while reading at the top (the view stays there), and at the bottom.
      const topRow = await scroller.evaluate((element) => {
        element.scrollTop = 0;
        return element.querySelector('.turn-divider')!.getBoundingClientRect().top;
      });
      const sent = await f!.api('POST', '/api/sessions/paged/messages', {
        text: 'Part 41',
        mode: 'followup',
      });
      expect(sent.status).toBe(202);
      await expect.poll(() => lastEnd.textContent()).toBe(`Turn ${turns + 1} completed`);
      expect(
        await page
          .locator('.turn-divider')
          .first()
          .evaluate((row) => row.getBoundingClientRect().top),
      ).toBe(topRow);
      await page.getByTestId('jump-latest').click();
      await page.getByTestId('composer-input').fill('Part 42');
      await page.getByTestId('composer-input').press('Enter');
      await expect.poll(() => lastEnd.textContent()).toBe(`Turn ${turns + 2} completed`);
      await expect
        .poll(() =>
          scroller.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight),
        )
        .toBeLessThan(80);
      expect((await shownParts()).slice(-3)).toEqual([turns, turns + 1, turns + 2]);
      expect(problems).toEqual([]);
      await page.close();
    },
    browserTestTimeout * 2,
  );
});
