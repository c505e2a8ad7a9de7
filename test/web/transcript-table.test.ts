import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../src/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture } from '../server/support.ts';
import { missingPhrase, transcriptCases } from '../transcript/transcript-cases.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage, screenshotsDir } from './support.ts';

// The Web UI over every log of the shared transcript table: what the page shows, in Chromium.
describe.skipIf(!hasChromium)('Web UI renders the shared transcript table', () => {
  const shared = browserSuite();
  let f: ServerFixture | undefined;
  beforeAll(async () => {
    const store = new MemorySessionStore();
    for (const [index, testCase] of transcriptCases.entries()) {
      await store.release(await store.create({ id: `table-${index}` }, { seed: await testCase.log() }));
    }
    f = await serverFixture([], { store, server: { webRoot: shared.webRoot } });
  }, browserTestTimeout);
  afterAll(async () => {
    await f?.close();
  });

  transcriptCases.forEach((testCase, index) => {
    it(
      testCase.name,
      async () => {
        const { page, problems } = await openPage(shared.context, `${f!.server.url}#/s/table-${index}`);
        const transcript = page.getByTestId('transcript');
        await page.locator('[data-testid="connection"]').waitFor({ state: 'detached' });
        await expect
          .poll(async () => missingPhrase(await transcript.innerText(), testCase.items))
          .toBeUndefined();
        await mkdir(screenshotsDir, { recursive: true });
        await page.screenshot({
          path: join(screenshotsDir, `transcript-table-${index}.png`),
          fullPage: true,
        });
        expect(problems).toEqual([]);
        await page.close();
      },
      browserTestTimeout,
    );
  });
});
