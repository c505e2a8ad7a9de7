import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const binPath = resolve(import.meta.dirname, '../../bin/rein.js');

/** A `rein web` server running as its own process. */
export interface ReinWebProcess {
  readonly process: ChildProcess;
  /** The launch URL (it carries the token). */
  readonly url: string;
  readonly origin: string;
  readonly token: string;
  /** What the server printed on stderr so far. */
  stderr(): string;
  /** Calls the JSON API with the token; resolves with status and parsed body. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
  /** SIGTERM, then waits for the exit (SIGKILL after a grace period). */
  stop(): Promise<void>;
}

/** Starts `rein web --store <store>` in `cwd` with its own Rein home, and waits for its URL. */
export async function startReinWeb(options: {
  store: string;
  home: string;
  cwd: string;
  env?: Record<string, string>;
}): Promise<ReinWebProcess> {
  const child = spawn(
    process.execPath,
    [binPath, 'web', '--store', options.store, '--port', '0', '--approve', 'yolo', '--cwd', options.cwd],
    {
      cwd: options.cwd,
      env: { ...process.env, REIN_HOME: options.home, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    stderr += text;
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = await new Promise<string>((done, fail) => {
    let stdout = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      stdout += text;
      const match = /Rein is running at (\S+)/.exec(stdout);
      if (match !== null) done(match[1]!);
    });
    child.once('exit', (code) =>
      fail(new Error(`rein web exited with ${code} before it listened:\n${stderr}`)),
    );
  });
  const parsed = new URL(url);
  const token = parsed.searchParams.get('token') ?? '';
  return {
    process: child,
    url,
    origin: parsed.origin,
    token,
    stderr: () => stderr,
    async api(method, path, body) {
      const response = await fetch(`${parsed.origin}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls `probe` until it returns a value other than undefined (or fails after `timeoutMs`). */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}
