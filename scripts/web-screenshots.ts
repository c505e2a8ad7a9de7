// `npm run screenshots:web`: the README's Web UI screenshots, taken from `npm start` itself in this
// checkout (the offline demo, the default approval mode), driven in Debian's Chromium.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { playDemo } from '../test/web/demo-flow.ts';
import { launchBrowser } from '../test/web/support.ts';

const root = resolve(import.meta.dirname, '..');
const home = mkdtempSync(join(tmpdir(), 'rein-screenshots-'));
const child = spawn('npm', ['start'], {
  cwd: root,
  env: {
    ...process.env,
    REIN_HOME: home,
    DEEPSEEK_API_KEY: '',
    OPENAI_API_KEY: '',
    ANTHROPIC_API_KEY: '',
    REIN_MODEL: '',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
  detached: true,
});
try {
  const url = await new Promise<string>((resolveUrl, reject) => {
    let seen = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      seen += text;
      const found = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(seen);
      if (found !== null) resolveUrl(found[0]);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${seen}`)));
  });
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await playDemo(page, url, join(root, 'docs', 'screenshots'));
    process.stdout.write(
      `screenshots written to docs/screenshots from ${url.replace(/token=\S+/, 'token=…')}\n`,
    );
  } finally {
    await browser.close();
  }
} finally {
  // npm start runs `rein web` as a grandchild: end the whole group.
  process.kill(-child.pid!, 'SIGINT');
  rmSync(home, { recursive: true, force: true });
}
