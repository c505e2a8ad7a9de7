import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReinHarness } from '../../src/index.ts';
import { createReinHarness } from '../../src/index.ts';
import type { ReinServer } from '../../src/server/index.ts';
import { startReinServer } from '../../src/server/index.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

describe.skipIf(!hasChromium)('Web UI: reasoning effort and a long Retry-After', () => {
  const shared = browserSuite();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it(
    'the effort chosen beside the model reaches the vendor; a 429 retry shows its countdown, then the answer',
    async () => {
      const vendor: FakeServer = await startFakeOpenAIServer([
        { status: 429, headers: { 'retry-after': '3' }, error: { message: 'slow down' } },
        { text: 'Thought hard.' },
      ]);
      cleanups.push(() => vendor.close());
      const root = await mkdtemp(join(tmpdir(), 'rein-effort-'));
      cleanups.push(() => rm(root, { recursive: true, force: true }));
      const cwd = join(root, 'workspace');
      await mkdir(cwd);
      const env = { DEEPSEEK_API_KEY: 'k', DEEPSEEK_BASE_URL: vendor.url, REIN_DEMO_DELAY_MS: '0' };
      const harness: ReinHarness = await createReinHarness({ cwd, home: join(root, 'home'), env });
      cleanups.push(() => harness.dispose());
      const server: ReinServer = await startReinServer({
        harness,
        cwd,
        home: harness.home,
        webRoot: shared.webRoot,
      });
      cleanups.push(() => server.close());

      const { page, problems } = await openPage(shared.context, server.url);
      const picker = page.getByTestId('model-picker');
      await expect
        .poll(() =>
          picker
            .locator('option')
            .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value)),
        )
        .toContain('deepseek/deepseek-v4-pro');
      await picker.selectOption('deepseek/deepseek-v4-pro');
      await page.getByTestId('reasoning-picker').selectOption('max');
      await page.getByTestId('composer-input').fill('think hard');
      await page.getByTestId('composer-input').press('Enter');

      await expect
        .poll(() => page.getByTestId('retry-countdown').textContent(), { timeout: 30_000 })
        .toMatch(/— [1-3]s left/);
      const notice = await page.getByTestId('retry-notice').textContent();
      expect(notice).toContain('RATE_LIMIT');
      expect(notice).toContain('retrying in 3s (automatic retry 1)');
      await expect
        .poll(() => page.getByTestId('transcript').textContent(), { timeout: 60_000 })
        .toContain('Thought hard.');
      // The countdown ends with the wait (it ticks every 250 ms), not with the answer's first frame.
      await expect.poll(() => page.getByTestId('retry-countdown').count(), { timeout: 5_000 }).toBe(0);
      expect(vendor.requests).toHaveLength(2);
      for (const request of vendor.requests) {
        expect(request.body).toMatchObject({ model: 'deepseek-v4-pro', reasoning_effort: 'max' });
      }
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );
});
