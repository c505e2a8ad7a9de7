import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/index.ts';
import type { ScriptedResponse } from '../../src/testing/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { listFilesTool, runParts, toolTurnReply } from './tool-turn-session.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

const turns = 100;
const stepsPerTurn = 50;
const streamedDeltas = Array.from({ length: 600 }, (_, index) =>
  index % 40 === 39 ? `word${index}\n\n` : `word${index} `,
);

// A session of 5,000 tool steps in Chromium (issue 25 item 6): it opens at its last turn without
// building every earlier one, scrolling back reveals the first turn, and a new answer still streams in
// at the bottom. Untimed: the speed is measured by `npm run bench:web`.
describe.skipIf(!hasChromium)('Web UI with a 5,000-step session', () => {
  const shared = browserSuite();
  let f: ServerFixture | undefined;
  let agent: Agent | undefined;
  let streamNext = false;
  beforeAll(async () => {
    const listFiles = listFilesTool({ concurrencySafe: true });
    let call = 0;
    f = await serverFixture([], {
      tools: [listFiles],
      server: { webRoot: shared.webRoot },
      fallback: (): ScriptedResponse => {
        if (streamNext) {
          streamNext = false;
          return { text: streamedDeltas, delayMs: 2 };
        }
        return toolTurnReply(call++, stepsPerTurn);
      },
    });
    agent = await f.harness.createAgent({ id: 'long', provider: 'scripted', model: 'test-model' });
    await runParts(agent, turns);
  }, browserTestTimeout);
  afterAll(async () => {
    await f?.close();
  });

  it(
    'opens at the last turn, scrolls back to the first, and streams a new answer at the bottom',
    async () => {
      const log = agent!.session.events;
      expect(log.filter((event) => event.type === 'tool/result')).toHaveLength(turns * stepsPerTurn);
      const { page, problems } = await openPage(shared.context, `${f!.server.url}#/s/long`);
      const scroller = page.getByTestId('scroller');
      const lastEnd = page.getByTestId('turn-end').last();
      await expect.poll(() => lastEnd.textContent()).toBe(`Turn ${turns} completed`);
      await expect.poll(() => lastEnd.isVisible()).toBe(true);
      expect(await lastEnd.evaluate((element) => element.getBoundingClientRect().bottom <= innerHeight)).toBe(
        true,
      );
      // Only the tail is in the page: the first turn is not built until someone scrolls back to it.
      const firstTurn = page.locator('.turn-divider', { hasText: /^Turn 1$/ });
      expect(await firstTurn.count()).toBe(0);
      expect(await page.getByTestId('tool-card').count()).toBeLessThan(200);
      await page.getByTestId('load-earlier').waitFor();

      // Scrolling back to the top loads earlier items until the first turn shows.
      for (let attempt = 0; attempt < 200 && (await firstTurn.count()) === 0; attempt++) {
        const before = await page.getByTestId('tool-card').count();
        await scroller.evaluate((element) => {
          element.scrollTop = 0;
        });
        await expect.poll(() => page.getByTestId('tool-card').count()).toBeGreaterThan(before);
      }
      await firstTurn.scrollIntoViewIfNeeded();
      expect(await firstTurn.isVisible()).toBe(true);
      expect(await page.getByTestId('load-earlier').count()).toBe(0);
      expect(await page.getByTestId('user-message').first().textContent()).toContain('Part 1');

      // Sending follows the bottom again; the streamed answer appends there and stays in view.
      streamNext = true;
      await page.getByTestId('composer-input').fill('Write the report');
      await page.getByTestId('composer-input').press('Enter');
      await page.locator('[data-testid="assistant-message"][data-streaming="true"]').waitFor();
      await expect.poll(() => lastEnd.textContent(), { timeout: 60_000 }).toBe(`Turn ${turns + 1} completed`);
      const answer = page.getByTestId('assistant-message').last();
      expect(await answer.innerText()).toContain('word599');
      expect(await answer.innerText()).toContain('word0 word1');
      const distance = await scroller.evaluate(
        (element) => element.scrollHeight - element.scrollTop - element.clientHeight,
      );
      expect(distance).toBeLessThan(80);
      expect(await firstTurn.count()).toBe(0);

      const tail = agent!.session.events.slice(log.length);
      const message = tail.find((event) => event.type === 'assistant/message');
      expect((message?.data as { message: { content: { text: string }[] } }).message.content[0]!.text).toBe(
        streamedDeltas.join(''),
      );
      expect(tail.filter((event) => event.type === 'assistant/chunk').length).toBeGreaterThanOrEqual(
        streamedDeltas.length,
      );
      expect(tail.at(-1)?.type).toBe('turn/end');
      expect(problems).toEqual([]);
      await page.close();
    },
    browserTestTimeout * 2,
  );
});
