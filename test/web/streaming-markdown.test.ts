import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

// A code block longer than the 4 KB an open block is re-parsed up to: it streams as plain text.
const longCode = [
  '```js',
  ...Array.from({ length: 260 }, (_, line) => `console.log('line ${line}');`),
  '```',
].join('\n');

// Over 100,000 characters: rendered block by block even once complete. Headings, emphasis, links,
// lists, short and long code blocks; the answer ends without a blank line, in its open last block.
function longAnswer(): string {
  const sections: string[] = [];
  for (let index = 0; sections.join('\n\n').length < 110_000; index++) {
    sections.push(`## Section ${index}`);
    sections.push(
      `Paragraph ${index} has **bold**, _emphasis_, \`inline code\` and [a link](https://example.com/${index}).\n` +
        `A second line of the same paragraph ${index}.`,
    );
    sections.push(`- item ${index}a\n- item ${index}b\n  - nested ${index}`);
    if (index % 10 === 5) sections.push(`\`\`\`ts\nconst value${index} = compute(${index});\n\`\`\``);
    if (index === 40) sections.push(longCode);
    // Raw HTML left open: it must stay inside its own block, as when each block is parsed alone.
    if (index === 20) sections.push('Raw <b>bold left open', '<div class="note">\nA raw block left open');
  }
  sections.push(longCode);
  return sections.join('\n\n');
}

/** Cuts text into deltas of `size` characters. */
function deltasOf(text: string, size: number): string[] {
  const deltas: string[] = [];
  for (let start = 0; start < text.length; start += size) deltas.push(text.slice(start, start + size));
  return deltas;
}

const long = longAnswer();
const short = `A short answer:\n\n${longCode}\n\nThat is **all**.`;
// About 13 KB of reasoning in lines, one of them blank, and a line longer than a piece.
const longReasoning = [
  ...Array.from(
    { length: 200 },
    (_, line) => `Step ${line}: consider the ${line % 7}th option <b>&amp;</b>.`,
  ),
  '',
  'x'.repeat(5_000),
  'The end.',
].join('\n');

async function lastAnswerSettled(page: Page, turn: number): Promise<void> {
  await expect
    .poll(() => page.getByTestId('turn-end').last().textContent(), { timeout: 60_000 })
    .toBe(`Turn ${turn} completed`);
  // Blocks that waited for a later frame are all in once nothing is busy.
  await expect.poll(() => page.locator('[aria-busy="true"]').count(), { timeout: 60_000 }).toBe(0);
}

// A streaming answer is rendered one top-level block at a time, each block once (issue 25 item 6):
// what it ends as must be exactly what the same answer renders as when opened from the log.
describe.skipIf(!hasChromium)('Web UI: a long answer streamed block by block', () => {
  const shared = browserSuite();
  let f: ServerFixture | undefined;
  beforeAll(async () => {
    f = await serverFixture(
      [
        { text: deltasOf(long, 40) },
        // Slow enough for the open code block to be seen as plain text while it streams.
        { text: deltasOf(short, 20), delayMs: 3 },
        { reasoning: deltasOf(longReasoning, 30), text: 'Done.' },
      ],
      { server: { webRoot: shared.webRoot } },
    );
  }, browserTestTimeout);
  afterAll(async () => {
    await f?.close();
  });

  it(
    'ends with the markup the same answer has when opened from the log, its long code block highlighted',
    async () => {
      const { id } = (await f!.api('POST', '/api/sessions', {})).json as { id: string };
      const { page, problems } = await openPage(
        shared.context,
        `${f!.server.url}#/s/${encodeURIComponent(id)}`,
      );
      await page.getByTestId('composer-input').fill('Write the long report');
      await page.getByTestId('composer-input').press('Enter');
      await lastAnswerSettled(page, 1);

      const answer = page.locator('.markdown-growing').last();
      const streamed = await answer.innerHTML();
      const message = f!.harness.agents
        .get(id)!
        .session.events.find((event) => event.type === 'assistant/message');
      expect((message?.data as { message: { content: { text: string }[] } }).message.content[0]!.text).toBe(
        long,
      );
      // Every block once, in groups of 16; the last block (the long code block) as highlighted code.
      const blocks = long.split('\n\n').length;
      expect(await answer.locator('.markdown-block').count()).toBe(blocks);
      expect(await answer.locator('.markdown-group').count()).toBe(Math.ceil((blocks - 1) / 16));
      expect(await answer.locator('.markdown-tail-plain').count()).toBe(0);
      expect(await answer.locator('pre code.hljs').count()).toBeGreaterThanOrEqual(3);
      expect(await answer.locator('h2').last().textContent()).toBe(
        `Section ${long.match(/## Section (\d+)/g)!.length - 1}`,
      );
      expect(await answer.locator('a[href="https://example.com/7"]').getAttribute('rel')).toBe(
        'noopener noreferrer nofollow',
      );
      expect(await answer.locator('.markdown-block').last().locator('pre code').textContent()).toMatch(
        /console\.log\('line 259'\);\n?$/,
      );
      // The open `<b>` and `<div>` end with their blocks: nothing after them is bold or inside the note.
      expect(await answer.locator('.markdown-block:has(b)').count()).toBe(1);
      expect(await answer.locator('.markdown-block:has(b)').textContent()).toBe('Raw bold left open\n');
      expect(await answer.locator('.note').count()).toBe(1);
      expect(await answer.locator('.note').textContent()).toBe('\nA raw block left open\n');

      await page.reload();
      await lastAnswerSettled(page, 1);
      expect(await page.locator('.markdown-growing').last().innerHTML()).toBe(streamed);
      expect(problems).toEqual([]);
      await page.close();
    },
    browserTestTimeout * 2,
  );

  it(
    'shows a long open code block as plain text while it streams, then as the same markup as from the log',
    async () => {
      const { id } = (await f!.api('POST', '/api/sessions', {})).json as { id: string };
      const { page, problems } = await openPage(
        shared.context,
        `${f!.server.url}#/s/${encodeURIComponent(id)}`,
      );
      await page.getByTestId('composer-input').fill('Show the code');
      await page.getByTestId('composer-input').press('Enter');
      const plain = page.locator('[data-streaming="true"] .markdown-tail-plain');
      await plain.waitFor();
      expect(await plain.textContent()).toMatch(/^```js\nconsole\.log\('line 0'\);/);
      await lastAnswerSettled(page, 1);

      // Complete and under 100,000 characters: parsed whole, as a message from the log is.
      const answer = page.getByTestId('assistant-message').last();
      expect(await answer.locator('.markdown-growing').count()).toBe(0);
      expect(await answer.locator('pre code.hljs').count()).toBe(1);
      expect(await answer.locator('strong').textContent()).toBe('all');
      const streamed = await answer.locator('.markdown').innerHTML();
      await page.reload();
      await lastAnswerSettled(page, 1);
      expect(await page.getByTestId('assistant-message').last().locator('.markdown').innerHTML()).toBe(
        streamed,
      );
      expect(problems).toEqual([]);
      await page.close();
    },
    browserTestTimeout,
  );

  it(
    'streams long reasoning into pieces extended in place; it reads as the whole text, after a reload too',
    async () => {
      const { id } = (await f!.api('POST', '/api/sessions', {})).json as { id: string };
      const { page, problems } = await openPage(
        shared.context,
        `${f!.server.url}#/s/${encodeURIComponent(id)}`,
      );
      await page.getByTestId('composer-input').fill('Think it over');
      await page.getByTestId('composer-input').press('Enter');
      await lastAnswerSettled(page, 1);
      const reasoning = page.getByTestId('assistant-message').last().locator('.reasoning .plain');
      expect(await reasoning.textContent()).toBe(longReasoning);
      // Pieces of at least 4 KB that end at a line end; the long line stays in one piece.
      const pieces = await reasoning.evaluate((element) =>
        [...element.children].map((child) => child.textContent ?? ''),
      );
      expect(pieces.length).toBeGreaterThanOrEqual(3);
      for (const piece of pieces.slice(0, -1)) {
        expect(piece.length).toBeGreaterThanOrEqual(4_096);
        expect(piece.endsWith('\n')).toBe(true);
      }
      expect(pieces.some((piece) => piece.includes('x'.repeat(5_000)))).toBe(true);
      expect(await reasoning.locator('b').count()).toBe(0);
      // Closed once the answer is done: opened to compare its height with the reloaded one.
      await page.getByTestId('assistant-message').last().locator('.reasoning summary').click();
      const height = await reasoning.evaluate((element) => element.getBoundingClientRect().height);

      await page.reload();
      await lastAnswerSettled(page, 1);
      await page.getByTestId('assistant-message').last().locator('.reasoning summary').click();
      const reloaded = page.getByTestId('assistant-message').last().locator('.reasoning .plain');
      expect(await reloaded.textContent()).toBe(longReasoning);
      expect(await reloaded.evaluate((element) => element.getBoundingClientRect().height)).toBe(height);
      expect(problems).toEqual([]);
      await page.close();
    },
    browserTestTimeout,
  );
});
