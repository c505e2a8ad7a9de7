import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { reinBin, sandbox } from './rein-process.ts';

// `script` (util-linux) gives the real binary a pseudo-terminal, as an interactive user has.
const scriptBin = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));

let box: Sandbox;
let server: FakeServer;

beforeAll(async () => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  server = await startFakeOpenAIServer([
    { status: 429, headers: { 'retry-after': '3' }, error: { message: 'slow down' } },
    { text: 'Done after the wait.' },
  ]);
});

afterAll(async () => {
  await server.close();
  box.cleanup();
});

const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

describe.skipIf(scriptBin === undefined)('a rate-limit wait on a terminal', () => {
  it('prints the retry and counts the wait down until the next attempt', async () => {
    const command = [process.execPath, reinBin, 'run', 'go'].map(quote).join(' ');
    const child = spawn(scriptBin!, ['-qfec', command, '/dev/null'], {
      cwd: box.workspace,
      env: {
        ...process.env,
        ...box.env,
        DEEPSEEK_API_KEY: 'sk-tty-test',
        DEEPSEEK_BASE_URL: server.url,
        OPENAI_API_KEY: '',
        ANTHROPIC_API_KEY: '',
        REIN_MODEL: '',
        TERM: 'dumb',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdout.setEncoding('utf8');
    let output = '';
    child.stdout.on('data', (text: string) => (output += text));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(output).toContain('↻ retry 1 in 3.0s after RATE_LIMIT');
    // The spinner relabels every frame: the countdown passes through the remaining seconds.
    expect(output).toMatch(/retrying in [1-3]s…/);
    expect(output).toContain('Done after the wait.');
    expect(server.requests).toHaveLength(2);
  }, 180_000);
});
