import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { reinBin, sandbox, waitForOutput } from './rein-process.ts';

// `script` (util-linux) gives the real binary a pseudo-terminal, as an interactive user has.
const scriptBin = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));

let box: Sandbox;
let server: FakeServer;

beforeAll(async () => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# TTY\n');
  server = await startFakeOpenAIServer([
    {
      toolCalls: [
        {
          id: 'call_tty_1',
          name: 'write_file',
          arguments: JSON.stringify({ path: 'approved.txt', content: 'yes\n' }),
        },
      ],
    },
    { text: 'Wrote it.' },
  ]);
});

afterAll(async () => {
  await server.close();
  box.cleanup();
});

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function onTerminal(prompt: string): {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
} {
  const command = [process.execPath, reinBin, 'run', '--approve', 'ask', prompt].map(shellQuote).join(' ');
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
  child.stdout!.setEncoding('utf8');
  let all = '';
  child.stdout!.on('data', (text: string) => (all += text));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, output: () => all };
}

describe.skipIf(scriptBin === undefined)('approvals on a terminal', () => {
  it('asks on the TTY; "y" allows the write once and the turn completes', async () => {
    const { child, exited, output } = onTerminal('write the file');
    await waitForOutput(child, 'stdout', (text) => text.includes('[y] allow once'), 120_000);
    expect(output()).toContain('? write_file needs your approval');
    expect(existsSync(join(box.workspace, 'approved.txt'))).toBe(false);
    child.stdin!.write('y\r');
    expect(await exited).toBe(0);
    expect(readFileSync(join(box.workspace, 'approved.txt'), 'utf8')).toBe('yes\n');
    expect(output()).toContain('Wrote it.');
  }, 180_000);

  it('Ctrl-C while the approval waits cancels the turn: exit 130, nothing written', async () => {
    server.push({
      toolCalls: [
        {
          id: 'call_tty_2',
          name: 'write_file',
          arguments: JSON.stringify({ path: 'never.txt', content: 'no\n' }),
        },
      ],
    });
    const { child, exited, output } = onTerminal('write another file');
    await waitForOutput(child, 'stdout', (text) => text.includes('[y] allow once'), 120_000);
    child.stdin!.write('\x03');
    expect(await exited).toBe(130);
    expect(output()).toContain('Cancelling…');
    expect(existsSync(join(box.workspace, 'never.txt'))).toBe(false);
  }, 180_000);
});
