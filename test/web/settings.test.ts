import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webSettings } from '../../src/cli/web-settings.ts';
import type { ReinHarness } from '../../src/index.ts';
import { createReinHarness } from '../../src/index.ts';
import type { ReinServer } from '../../src/server/index.ts';
import { startReinServer } from '../../src/server/index.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';

describe.skipIf(!hasChromium)('Web UI: settings in a real browser', () => {
  const shared = browserSuite();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it(
    'a key saved in the settings panel makes its provider pickable at once, and the next request carries it',
    async () => {
      const secret = 'sk-from-the-settings-panel-77aa';
      const vendor: FakeServer = await startFakeOpenAIServer([{ text: ['Hi ', 'from DeepSeek.'] }]);
      cleanups.push(() => vendor.close());
      const root = await mkdtemp(join(tmpdir(), 'rein-settings-'));
      cleanups.push(() => rm(root, { recursive: true, force: true }));
      const cwd = join(root, 'workspace');
      await mkdir(cwd);
      const env = { DEEPSEEK_BASE_URL: vendor.url, REIN_DEMO_DELAY_MS: '0' };
      const harness: ReinHarness = await createReinHarness({ cwd, home: join(root, 'home'), env });
      cleanups.push(() => harness.dispose());
      const server: ReinServer = await startReinServer({
        harness,
        cwd,
        home: harness.home,
        webRoot: shared.webRoot,
        settings: webSettings(harness, env),
      });
      cleanups.push(() => server.close());

      const { page, problems } = await openPage(shared.context, server.url);
      const picker = page.locator('[data-testid="model-picker"]');
      const choices = (): Promise<string[]> =>
        picker
          .locator('option')
          .evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value));
      await expect.poll(choices).toContain('demo/running-example');
      expect((await choices()).some((choice) => choice.startsWith('deepseek/'))).toBe(false);

      await page.locator('[data-testid="open-settings"]').click();
      const panel = page.locator('[data-testid="settings-panel"]');
      await panel.locator('select').selectOption('deepseek');
      await panel.locator('input[type="password"]').fill(secret);
      await panel.getByRole('button', { name: 'Save key' }).click();
      await expect.poll(() => panel.textContent()).toContain('Saved the deepseek key.');
      expect(await panel.textContent()).not.toContain(secret);
      // The key is in the config file (mode 0600), and the picker offers DeepSeek without a reload.
      const config = join(harness.home, 'config.json');
      expect(JSON.parse(await readFile(config, 'utf8'))).toMatchObject({ keys: { deepseek: secret } });
      await panel.getByRole('button', { name: 'Close' }).click();
      await expect.poll(choices).toContain('deepseek/deepseek-chat');

      // A new session on DeepSeek: its first request reaches the vendor with the saved key.
      await picker.selectOption('deepseek/deepseek-chat');
      await page.getByTestId('composer-input').fill('hello');
      await page.getByTestId('composer-input').press('Enter');
      await expect.poll(() => vendor.requests.length, { timeout: 60_000 }).toBe(1);
      expect(vendor.requests[0]!.headers.authorization).toBe(`Bearer ${secret}`);
      await expect
        .poll(() => page.locator('[data-testid="transcript"]').textContent(), { timeout: 60_000 })
        .toContain('Hi from DeepSeek.');
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );
});
