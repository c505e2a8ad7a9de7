import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.ts';
import type { ReinResult, Sandbox } from './rein-process.ts';
import { runRein, sandbox } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Bad input\n');
});

afterAll(() => box.cleanup());

function storedSessions(): string[] {
  const directory = join(box.home, 'sessions');
  return existsSync(directory) ? readdirSync(directory).filter((name) => !name.startsWith('.')) : [];
}

/** The first stderr line, and that there is exactly one line that is not usage. */
function errorLine(result: ReinResult): string {
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  expect(lines.filter((line) => line.startsWith('rein:'))).toHaveLength(1);
  return lines[0]!;
}

const cases: { name: string; args: string[]; code: number; line: RegExp; usage: boolean }[] = [
  {
    name: 'an unknown command',
    args: ['frobnicate'],
    code: 2,
    line: /^rein: unknown command 'frobnicate'$/,
    usage: true,
  },
  {
    name: 'an unknown option',
    args: ['run', '--frob', 'x'],
    code: 2,
    line: /^rein: unknown option '--frob' for 'rein run'$/,
    usage: true,
  },
  {
    name: 'an unknown leading option',
    args: ['--frob'],
    code: 2,
    line: /^rein: unknown option '--frob'$/,
    usage: true,
  },
  {
    name: 'a missing prompt',
    args: ['run'],
    code: 2,
    line: /^rein: missing prompt: rein run "what to do"$/,
    usage: true,
  },
  {
    name: 'an option without its value',
    args: ['run', 'hello', '--model'],
    code: 2,
    line: /^rein: option '--model' needs a value \(provider\/model\)$/,
    usage: true,
  },
  {
    name: 'a flag given a value',
    args: ['run', '--json=yes', 'hello'],
    code: 2,
    line: /^rein: option '--json' takes no value$/,
    usage: true,
  },
  {
    name: 'a bad --max-steps',
    args: ['run', '--max-steps', '0', 'hello'],
    code: 2,
    line: /^rein: option '--max-steps' needs a positive whole number, not '0'$/,
    usage: true,
  },
  {
    name: 'a bad --approve',
    args: ['run', '--approve', 'maybe', 'hello'],
    code: 2,
    line: /^rein: '--approve' must be one of ask, auto-edit, sandbox, yolo, read-only, not 'maybe'$/,
    usage: true,
  },
  {
    name: 'a malformed --model',
    args: ['run', '--model', 'gpt', 'hello'],
    code: 2,
    line: /^rein: '--model' must be written provider\/model/,
    usage: true,
  },
  {
    name: '--resume with --continue',
    args: ['run', '--resume', 'a', '--continue', 'hello'],
    code: 2,
    line: /^rein: use either '--resume <id>' or '--continue', not both$/,
    usage: true,
  },
  {
    name: 'a missing cwd',
    args: ['run', '--cwd', 'no/such/dir', 'hello'],
    code: 1,
    line: /^rein: error INVALID_CWD: cannot work in \S+no\/such\/dir: it does not exist$/,
    usage: false,
  },
  {
    name: 'a file as cwd',
    args: ['run', '--cwd', 'README.md', 'hello'],
    code: 1,
    line: /^rein: error INVALID_CWD: \S+README\.md is not a directory$/,
    usage: false,
  },
  {
    name: 'a session id that does not exist',
    args: ['run', '--resume', 'no-such-session', 'hello'],
    code: 1,
    line: /^rein: error SESSION_NOT_FOUND: /,
    usage: false,
  },
  {
    name: 'nothing to continue',
    args: ['run', '--continue', 'hello'],
    code: 1,
    line: /^rein: error NO_SESSION: no session to continue in /,
    usage: false,
  },
  {
    name: 'show without an id',
    args: ['show'],
    code: 2,
    line: /^rein: missing session id: rein show <id> \(or --last\)$/,
    usage: true,
  },
  {
    name: 'show of an unknown id',
    args: ['show', 'no-such-session'],
    code: 1,
    line: /^rein: error SESSION_NOT_FOUND: /,
    usage: false,
  },
  {
    name: 'rm of an unknown id',
    args: ['rm', 'no-such-session'],
    code: 1,
    line: /^rein: error SESSION_NOT_FOUND: /,
    usage: false,
  },
  {
    name: 'fork of an unknown id',
    args: ['fork', 'no-such-session'],
    code: 1,
    line: /^rein: error SESSION_NOT_FOUND: /,
    usage: false,
  },
  {
    name: 'too many arguments',
    args: ['show', 'a', 'b'],
    code: 2,
    line: /^rein: unexpected argument 'b' for 'rein show'$/,
    usage: true,
  },
];

/** Runs the command line in this process (same code as the binary) with an empty, closed stdin. */
async function runInProcess(args: string[]): Promise<ReinResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdin: Readable.from([]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { ...box.env, REIN_DEMO_DELAY_MS: '0' },
    cwd: box.workspace,
  });
  return { code, signal: null, stdout, stderr };
}

function check(entry: (typeof cases)[number], result: ReinResult): void {
  expect(result.code).toBe(entry.code);
  expect(result.stdout).toBe('');
  expect(errorLine(result)).toMatch(entry.line);
  if (entry.usage) expect(result.stderr).toMatch(/\nUsage:?/);
  else expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(storedSessions()).toEqual([]);
}

describe('bad input: one line on stderr, usage where useful, non-zero exit, nothing written', () => {
  for (const entry of cases) {
    it(
      entry.name,
      async () => {
        check(entry, await runInProcess(entry.args));
      },
      60_000,
    );
  }

  // The same through the real binary, for a sample that covers each kind of exit.
  const spawned = [
    'an unknown command',
    'an unknown option',
    'a missing cwd',
    'a session id that does not exist',
  ];
  for (const name of spawned) {
    it(`${name} (the real binary)`, async () => {
      const entry = cases.find((candidate) => candidate.name === name)!;
      check(entry, await runRein(entry.args, { cwd: box.workspace, env: box.env }));
    }, 120_000);
  }
});
