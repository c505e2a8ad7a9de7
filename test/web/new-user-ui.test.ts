import type { Locator, Page } from 'playwright-core';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Agent, Harness } from '../../src/index.ts';
import { compactSession } from '../../src/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage, screenshotsDir } from './support.ts';

/** True when the element's box is inside the window and inside the transcript's scroll area. */
function inViewport(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const scroller = element.closest('[data-testid="scroller"]')?.getBoundingClientRect();
    const top = Math.max(0, scroller?.top ?? 0);
    const bottom = Math.min(window.innerHeight, scroller?.bottom ?? window.innerHeight);
    return box.height > 0 && box.bottom > top && box.top < bottom;
  });
}

async function shot(page: Page, name: string): Promise<void> {
  await mkdir(screenshotsDir, { recursive: true });
  await page.screenshot({ path: join(screenshotsDir, `${name}.png`) });
}

async function submit(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text);
  await page.getByTestId('composer-input').press('Enter');
}

const longAnswer = Array.from({ length: 80 }, (_, index) => `Line ${index + 1} of a long answer.\n`).join(
  '\n',
);

describe.skipIf(!hasChromium)('Web UI: what a new user hits (issue 23, items 10 and 12–16)', () => {
  const shared = browserSuite();
  let f: ServerFixture | undefined;
  beforeAll(async () => {
    await shared.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  }, browserTestTimeout);
  afterEach(async () => {
    await f?.close();
    f = undefined;
  });

  function onlyAgent(): Agent {
    return f!.harness.agents.list()[0]!;
  }

  it(
    'follows the bottom on send and while streaming; scrolling up stops it and "Jump to latest" comes back',
    async () => {
      f = await serverFixture(
        [
          { text: longAnswer },
          { text: Array.from({ length: 40 }, (_, index) => `streamed part ${index}\n\n`), delayMs: 80 },
          { text: Array.from({ length: 60 }, (_, index) => `second stream ${index}\n\n`), delayMs: 80 },
        ],
        { server: { webRoot: shared.webRoot } },
      );
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, 'Write a long answer');
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      await expect.poll(() => page.getByTestId('assistant-message').count()).toBe(1);
      const scroller = page.getByTestId('scroller');
      await scroller.evaluate((element) => (element.scrollTop = 0));
      await page.getByTestId('jump-latest').waitFor();

      // Sending while scrolled up: the new message and the streamed answer are shown.
      await submit(page, 'And now stream');
      await expect.poll(() => inViewport(page.getByTestId('user-message').last())).toBe(true);
      await page.locator('[data-testid="assistant-message"][data-streaming="true"]').waitFor();
      await expect.poll(() => inViewport(page.getByTestId('assistant-message').last())).toBe(true);
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      await expect.poll(() => inViewport(page.locator('[data-testid="turn-end"]').last())).toBe(true);
      expect(await page.getByTestId('jump-latest').count()).toBe(0);

      // Scrolling up during a stream leaves the view where the user put it.
      await submit(page, 'Stream again');
      await page.locator('[data-testid="assistant-message"][data-streaming="true"]').waitFor();
      await scroller.hover();
      await page.mouse.wheel(0, -5000);
      await page.getByTestId('jump-latest').waitFor();
      const held = await scroller.evaluate((element) => element.scrollTop);
      await expect
        .poll(() => page.getByTestId('assistant-message').last().textContent(), { timeout: 30_000 })
        .toContain('second stream 20');
      expect(await scroller.evaluate((element) => element.scrollTop)).toBe(held);
      expect(
        await inViewport(page.getByTestId('assistant-message').last().getByText('second stream 20')),
      ).toBe(false);
      await shot(page, 'jump-to-latest');
      await page.getByTestId('jump-latest').click();
      await expect.poll(() => inViewport(page.getByTestId('assistant-message').last())).toBe(true);
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'an unknown session id says "Session not found" with a way back, and stops reconnecting',
    async () => {
      f = await serverFixture([], { server: { webRoot: shared.webRoot } });
      const { page, problems } = await openPage(shared.context, `${f.server.url}#/s/no-such-session`);
      const missing = page.getByTestId('session-not-found');
      await missing.waitFor();
      expect(await missing.textContent()).toContain('Session not found');
      expect(await missing.textContent()).toContain('no-such-session');
      expect(await page.getByTestId('connection').count()).toBe(0);
      await shot(page, 'session-not-found');
      await page.getByTestId('back-to-sessions').click();
      await missing.waitFor({ state: 'detached' });
      expect(await page.locator('.empty').textContent()).toContain('Type a message below');
      expect(page.url()).not.toContain('no-such-session');
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'a wrong token shows one banner that says to open the URL `rein web` printed',
    async () => {
      f = await serverFixture([], { server: { webRoot: shared.webRoot } });
      const url = f.server.url.replace(/token=[^&#]+/, 'token=stale-token');
      const { page } = await openPage(shared.context, `${url}#/s/some-session`);
      await page.getByTestId('auth-banner').waitFor();
      // Every early call (info, models, sessions, the stream) fails: still one banner.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await page.getByTestId('auth-banner').count()).toBe(1);
      expect(await page.getByTestId('api-error').count()).toBe(0);
      expect(await page.getByTestId('auth-banner').textContent()).toContain(
        'Open the URL that rein web printed in its terminal',
      );
      expect(await page.getByTestId('connection').count()).toBe(0);
      await shot(page, 'stale-token');
    },
    browserTestTimeout,
  );

  it(
    'one failure shows one banner with its code and retry state; Retry sends the prompt again',
    async () => {
      f = await serverFixture(
        [{ error: { code: 'AUTH', message: 'the key was refused' } }, { text: 'Recovered.' }],
        { server: { webRoot: shared.webRoot } },
      );
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, 'Say hello');
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      const banners = page.locator('[role="alert"]');
      await expect.poll(() => banners.count()).toBe(1);
      expect(await banners.first().textContent()).toContain('AUTH');
      expect(await banners.first().textContent()).toContain('the key was refused');
      expect(await page.getByTestId('retry-state').textContent()).toBe('Not retried automatically.');
      await shot(page, 'one-failure-banner');
      await page.getByTestId('retry-turn').click();
      await expect
        .poll(() => page.getByTestId('assistant-message').last().textContent())
        .toContain('Recovered.');
      await onlyAgent().whenIdle();
      const prompts = onlyAgent()
        .session.eventsOfType('user/message')
        .map((event) =>
          event.data.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
        );
      expect(prompts).toEqual(['Say hello', 'Say hello']);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'Compact says what happened: here, that there was nothing to compact and why',
    async () => {
      let host: Harness | undefined;
      f = await serverFixture([{ text: 'Short answer.' }], {
        server: { webRoot: shared.webRoot, compact: (agent) => compactSession(host!, agent) },
      });
      host = f.harness;
      const { page, problems } = await openPage(shared.context, f.server.url);
      await submit(page, 'Hi');
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      await page.getByTestId('compact').click();
      const feedback = page.getByTestId('compact-feedback');
      await feedback.waitFor();
      expect(await feedback.textContent()).toContain(
        'Nothing to compact: the history already fits what is kept verbatim.',
      );
      expect(await inViewport(feedback)).toBe(true);
      await shot(page, 'compact-feedback');
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'at 390 px wide the transcript keeps the width and the sessions open from a menu button',
    async () => {
      f = await serverFixture([{ text: 'A reply that should read as a sentence, not a one-word column.' }], {
        server: { webRoot: shared.webRoot },
      });
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.setViewportSize({ width: 390, height: 844 });
      await submit(page, 'Hello from a phone');
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      const answer = page.getByTestId('assistant-message').last();
      expect((await answer.boundingBox())!.width).toBeGreaterThan(330);
      const sidebar = page.locator('nav.sidebar');
      // The sidebar slides out (a 0.15 s transform transition from the desktop layout): wait for its end.
      await expect
        .poll(async () => {
          const hidden = (await sidebar.boundingBox())!;
          return hidden.x + hidden.width;
        })
        .toBeLessThanOrEqual(0);
      await shot(page, 'phone-transcript');
      await page.getByTestId('toggle-sidebar').click();
      await expect.poll(async () => (await sidebar.boundingBox())!.x).toBe(0);
      await shot(page, 'phone-sidebar');
      await page.getByTestId('session-row').first().locator('.session-open').click();
      await expect
        .poll(async () => {
          const box = (await sidebar.boundingBox())!;
          return box.x + box.width;
        })
        .toBeLessThanOrEqual(0);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'markdown tables and quotes are framed, code has a copy button, and the theme follows a dark system',
    async () => {
      const code = 'const answer = 42;\nconsole.log(answer);';
      f = await serverFixture(
        [
          {
            text: [
              '| Name | Value |\n| --- | --- |\n| alpha | 1 |\n| beta | 2 |\n\n',
              '> A quoted line.\n\n',
              '```ts\n' + code + '\n```\n',
            ],
          },
        ],
        { server: { webRoot: shared.webRoot } },
      );
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.emulateMedia({ colorScheme: 'dark' });
      await submit(page, 'Show me markdown');
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      const answer = page.getByTestId('assistant-message').last();
      const cell = answer.locator('td').first();
      await cell.waitFor();
      const cellStyle = await cell.evaluate((element) => {
        const style = getComputedStyle(element);
        return { border: style.borderTopWidth, padding: parseFloat(style.paddingLeft) };
      });
      expect(cellStyle.border).toBe('1px');
      expect(cellStyle.padding).toBeGreaterThanOrEqual(6);
      expect(
        await answer.locator('blockquote').evaluate((element) => getComputedStyle(element).borderLeftWidth),
      ).toBe('4px');
      const background = await page.evaluate(
        () => getComputedStyle(document.documentElement).backgroundColor,
      );
      const [red, green, blue] = (background.match(/\d+/g) ?? []).map(Number);
      expect(red! + green! + blue!).toBeLessThan(150);
      await shot(page, 'markdown-dark');
      await answer.getByTestId('copy-code').click();
      await expect.poll(() => answer.getByTestId('copy-code').textContent()).toBe('Copied');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${code}\n`);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );
});
