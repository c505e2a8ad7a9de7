import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { buildWeb } from '../../src/server/index.ts';

/** Debian's Chromium (installed by `.ci/run`); browser tests skip with a message when it is absent. */
export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
if (!hasChromium) {
  console.warn(`[rein] skipping browser tests: ${chromiumPath} is missing (apt-get install -y chromium)`);
}

/** Builds the UI into a fresh temporary web root (one per test file, so parallel files never race). */
export async function buildTestWeb(): Promise<{ webRoot: string; dispose(): Promise<void> }> {
  const webRoot = await mkdtemp(join(tmpdir(), 'rein-web-dist-'));
  await buildWeb({ force: true, outDir: webRoot, minify: false });
  return { webRoot, dispose: () => rm(webRoot, { recursive: true, force: true }) };
}

/** Launches headless Chromium the way CI does. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** The browser, context and built UI one describe block shares. */
export interface BrowserSuite {
  readonly context: BrowserContext;
  readonly webRoot: string;
}

/** Registers, in the calling describe block, one Chromium, one context and one built UI for all its tests. */
export function browserSuite(): BrowserSuite {
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let web: Awaited<ReturnType<typeof buildTestWeb>> | undefined;
  beforeAll(async () => {
    [web, browser] = await Promise.all([buildTestWeb(), launchBrowser()]);
    context = await browser.newContext();
  }, browserTestTimeout);
  afterAll(async () => {
    await browser?.close();
    await web?.dispose();
  });
  return {
    get context(): BrowserContext {
      if (context === undefined) throw new Error('the browser suite is not started');
      return context;
    },
    get webRoot(): string {
      if (web === undefined) throw new Error('the browser suite is not started');
      return web.webRoot;
    },
  };
}

/** Opens a page with a fixed viewport that fails the test on any page error or CSP violation. */
export async function openPage(
  browser: Browser | BrowserContext,
  url: string,
): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1180, height: 760 });
  // Generous waits: CI shares two cores between the browser, the server and other test files.
  page.setDefaultTimeout(60_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
      problems.push(`console: ${message.text()}`);
    }
  });
  await page.goto(url);
  return { page, problems };
}

/** Milliseconds a browser test may take on a loaded two-core machine. */
export const browserTestTimeout = 120_000;

/** The transcript's rendered HTML, for identical-reload comparisons. */
export function transcriptHtml(page: Page): Promise<string> {
  return page.locator('[data-testid="transcript"]').innerHTML();
}

/** Where browser tests save their screenshots (a gitignored test-artifacts folder). */
export const screenshotsDir = join(import.meta.dirname, '..', '..', 'test-artifacts', 'screenshots');
