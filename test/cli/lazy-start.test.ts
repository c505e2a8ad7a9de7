// Lazy start: which of Rein's own modules a `rein` process actually loads, read from a module hook in the
// real process and mapped back to sources through the bundle's source maps.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { runRein, sandbox, startRein, waitForOutput } from './rein-process.ts';

const root = resolve(import.meta.dirname, '..', '..');
const recorder = pathToFileURL(join(root, 'test', 'support', 'load-recorder.mjs')).href;
let box: Sandbox;
let logCount = 0;

beforeAll(() => {
  box = sandbox();
  writeFileSync(join(box.root, 'README.md'), '# Lazy\n');
});

afterAll(() => box.cleanup());

/** The built-in modules (`node:…`, internal ones included) a log recorded, as Node lists them. */
function builtins(logPath: string): string[] {
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('node:'))
    .map((line) => line.slice('node:'.length));
}

/** The sources (relative to the checkout) of every Rein module file a log recorded, plus the packages. */
function loaded(logPath: string): { sources: string[]; packages: string[] } {
  const urls = readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('file:'));
  const sources = new Set<string>();
  const packages = new Set<string>();
  for (const url of urls) {
    const file = fileURLToPath(url);
    const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    if (inModules !== null) {
      packages.add(inModules[1]!);
      continue;
    }
    if (!file.startsWith(join(root, 'dist'))) {
      sources.add(relative(root, file));
      continue;
    }
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    for (const source of map.sources) sources.add(relative(root, resolve(dirname(file), source)));
  }
  return { sources: [...sources].sort(), packages: [...packages].sort() };
}

function recordingEnv(): { logPath: string; env: Record<string, string> } {
  logCount += 1;
  const logPath = join(box.root, `loads-${logCount}.log`);
  writeFileSync(logPath, '');
  return {
    logPath,
    env: { ...box.env, REIN_LOAD_LOG: logPath, NODE_OPTIONS: `--import=${recorder}` },
  };
}

const startUp = [
  'bin/node-check.js',
  'bin/rein.js',
  'src/cli/cli-error.ts',
  'src/cli/cli-io.ts',
  'src/cli/command-line.ts',
  'src/cli/command-specs.ts',
  'src/cli/help-text.ts',
  'src/cli/main.ts',
  'src/llm/llm-error.ts',
  'src/package-root.ts',
];

describe('lazy CLI start: a command loads only its own code', () => {
  for (const flag of ['--version', '--help']) {
    it(`rein ${flag} loads the command table and nothing else: no SDK, no command, no dependency`, async () => {
      const { logPath, env } = recordingEnv();
      const result = await runRein([flag], { cwd: box.root, env });
      expect(result.code).toBe(0);
      const { sources, packages } = loaded(logPath);
      expect(sources.filter((source) => !startUp.includes(source))).toEqual([]);
      expect(sources).toContain('src/cli/main.ts');
      expect(packages).toEqual([]);
    });
  }

  it('rein run does not load the server', async () => {
    const { logPath, env } = recordingEnv();
    const result = await runRein(['run', '--model', 'demo/running-example', '--approve', 'yolo', 'hi'], {
      cwd: box.root,
      env,
    });
    expect(result.code).toBe(0);
    const { sources } = loaded(logPath);
    expect(sources).toContain('src/cli/run-command.ts');
    expect(sources.filter((source) => source.startsWith('src/server/'))).toEqual([]);
    expect(sources).not.toContain('src/cli/web-command.ts');
  });

  it('rein run on the demo model imports no dependency: the store driver, matchers, diff and SSE parser wait for use', async () => {
    const { logPath, env } = recordingEnv();
    const result = await runRein(['run', '--model', 'demo/running-example', '--approve', 'yolo', 'hi'], {
      cwd: box.root,
      env,
    });
    expect(result.code).toBe(0);
    expect(loaded(logPath).packages).toEqual([]);
  });

  it('rein run loads neither child_process nor readline until a bash call or a question needs them', async () => {
    // Without a file to read, the demo answers in one step and calls no tool.
    const empty = join(box.root, 'nothing-to-read');
    mkdirSync(empty, { recursive: true });
    const quiet = recordingEnv();
    const answered = await runRein(['run', '--model', 'demo/running-example', '--approve', 'yolo', 'hi'], {
      cwd: empty,
      env: quiet.env,
    });
    expect(answered.code).toBe(0);
    const names = builtins(quiet.logPath);
    // The recorder lists what the run did load: the store's built-ins.
    expect(names).toEqual(expect.arrayContaining(['fs/promises', 'crypto']));
    // (`net` is not among them: a piped stdout is a socket.)
    const deferred = ['child_process', 'internal/child_process', 'dgram', 'readline'];
    expect(names.filter((name) => deferred.includes(name))).toEqual([]);
    // With the README, its second step counts the lines with `bash`: child_process loads then.
    const shell = recordingEnv();
    const ran = await runRein(['run', '--model', 'demo/running-example', '--approve', 'yolo', 'hi'], {
      cwd: box.root,
      env: shell.env,
    });
    expect(ran.code).toBe(0);
    expect(`${ran.stdout}${ran.stderr}`).toContain('⏺ bash');
    expect(builtins(shell.logPath)).toContain('child_process');
  });

  it('rein web loads neither the terminal approver nor the run command', async () => {
    const { logPath, env } = recordingEnv();
    const { child, result } = startRein(['web', '--port', '0'], { cwd: box.root, env });
    await waitForOutput(child, 'stdout', (text) => text.includes('Rein is running at'));
    child.kill('SIGINT');
    // Only what was loaded matters here (the exit on Ctrl-C is tested in web-and-compact.test.ts).
    await result;
    const { sources } = loaded(logPath);
    expect(sources).toContain('src/server/rein-server.ts');
    expect(sources).not.toContain('src/cli/terminal-approver.ts');
    expect(sources).not.toContain('src/cli/run-command.ts');
  });
});
