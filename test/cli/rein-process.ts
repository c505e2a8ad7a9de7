import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The real `rein` binary, run as a user would. */
export const reinBin = resolve(import.meta.dirname, '../../bin/rein.js');

/** What a finished `rein` process left behind. */
export interface ReinResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of one `rein` process. */
export interface ReinOptions {
  cwd: string;
  /** Extra environment; provider keys are removed from the inherited one unless given here. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed; stdin is closed at once when omitted. */
  input?: string;
}

// Keys from the developer's shell must never make a test reach a real vendor.
const scrubbed = [
  'DEEPSEEK_API_KEY',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'DEEPSEEK_BASE_URL',
  'OPENAI_BASE_URL',
  'ANTHROPIC_BASE_URL',
  'REIN_MODEL',
];

/** The environment a test's `rein` runs with: no developer keys, no demo delay, no colour, plus `extra`. */
export function reinEnvironment(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of scrubbed) delete env[name];
  env.REIN_DEMO_DELAY_MS = '0';
  env.NO_COLOR = '1';
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts `rein` with arguments; the caller reads its output and waits for it. */
export function startRein(
  args: readonly string[],
  options: ReinOptions,
): { child: ChildProcess; result: Promise<ReinResult> } {
  const child = spawn(process.execPath, [reinBin, ...args], {
    cwd: options.cwd,
    env: reinEnvironment(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  child.stdin!.end(options.input ?? '');
  const result = new Promise<ReinResult>((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
  return { child, result };
}

/** Runs `rein` to completion. */
export function runRein(args: readonly string[], options: ReinOptions): Promise<ReinResult> {
  return startRein(args, options).result;
}

/** A temporary Rein home plus a workspace directory, removed by `cleanup`. */
export interface Sandbox {
  root: string;
  home: string;
  workspace: string;
  env: Record<string, string>;
  cleanup(): void;
}

/** Creates a sandbox: `REIN_HOME` and a workspace under one temporary directory. */
export function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'rein-cli-'));
  const home = join(root, 'home');
  const workspace = join(root, 'workspace');
  return {
    root,
    home,
    workspace,
    env: { REIN_HOME: home },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Parses `--json` output: durable lines (with `seq`) and live lines (with `live: true`). */
export function parseJsonLines(stdout: string): {
  durable: { seq: number; type: string; time: number; data: unknown }[];
  live: { live: true; type: string; data: unknown }[];
} {
  const durable: { seq: number; type: string; time: number; data: unknown }[] = [];
  const live: { live: true; type: string; data: unknown }[] = [];
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const value = JSON.parse(line) as Record<string, unknown>;
    if (value.live === true) live.push(value as { live: true; type: string; data: unknown });
    else durable.push(value as { seq: number; type: string; time: number; data: unknown });
  }
  return { durable, live };
}

/** Waits until `predicate` holds for the text a stream has produced so far. */
export function waitForOutput(
  child: ChildProcess,
  stream: 'stdout' | 'stderr',
  predicate: (text: string) => boolean,
  timeoutMs = 60_000,
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let seen = '';
    const source = child[stream]!;
    const timer = setTimeout(() => {
      source.off('data', onData);
      reject(new Error(`no matching ${stream} within ${timeoutMs} ms; saw: ${seen.slice(-500)}`));
    }, timeoutMs);
    function onData(text: string | Buffer): void {
      seen += String(text);
      if (predicate(seen)) {
        clearTimeout(timer);
        source.off('data', onData);
        resolvePromise(seen);
      }
    }
    source.on('data', onData);
  });
}
