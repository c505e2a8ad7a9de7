import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../cli/rein-process.ts';
import { reinBin, sandbox, waitForOutput } from '../cli/rein-process.ts';
import { playDemo } from './demo-flow.ts';
import { hasChromium, launchBrowser } from './support.ts';

let box: Sandbox;
let browser: Browser | undefined;

beforeAll(async () => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(
    join(box.workspace, 'README.md'),
    '# Demo project\n\nA project to try Rein on.\n\n## Usage\n\nrun it\n',
  );
  if (hasChromium) browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  box.cleanup();
});

describe.skipIf(!hasChromium)('npm start on the offline demo, in the default approval mode', () => {
  it('plays the running example: the shell step opens the approval dialog; allowed, the turn completes with the summary', async () => {
    // What `npm start` runs once the JS is built: `rein web` with no provider key, in the default mode.
    const child = spawn(process.execPath, [reinBin, 'web'], {
      cwd: box.workspace,
      env: {
        ...process.env,
        ...box.env,
        DEEPSEEK_API_KEY: '',
        OPENAI_API_KEY: '',
        ANTHROPIC_API_KEY: '',
        REIN_MODEL: '',
        REIN_DEMO_DELAY_MS: '0',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      child.stdout!.setEncoding('utf8');
      const printed = await waitForOutput(child, 'stdout', (text) =>
        /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.test(text),
      );
      const url = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(printed)![0];
      const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
      const shown = await playDemo(page, url, process.env.REIN_SCREENSHOT_DIR);
      expect(shown.dialogText).toContain('bash');
      expect(shown.dialogText).toContain('wc -l -w README.md');
      expect(shown.summary).toContain('Summary of README.md');
      expect(shown.summary).toContain('wc counts 7 lines and 13 words.');
      await page.close();
    } finally {
      child.kill('SIGINT');
    }
  }, 120_000);
});
