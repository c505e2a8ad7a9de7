import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox, startRein, waitForOutput } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Web project\n');
});

afterAll(() => box.cleanup());

describe('rein web', () => {
  it('starts the server on loopback, prints its URL with the token, serves the API, and stops on Ctrl-C', async () => {
    const { child, result } = startRein(['web', '--port', '0'], { cwd: box.workspace, env: box.env });
    const printed = await waitForOutput(
      child,
      'stdout',
      (text) => /Rein is running at \S+\n/.test(text),
      120_000,
    );
    const url = new URL(/Rein is running at (\S+)\n/.exec(printed)![1]!);
    expect(url.hostname).toBe('127.0.0.1');
    const token = url.searchParams.get('token')!;
    expect(token.length).toBeGreaterThanOrEqual(16);
    const refused = await fetch(new URL('/api/sessions', url));
    expect(refused.status).toBe(401);
    const sessions = await fetch(new URL('/api/sessions', url), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(sessions.status).toBe(200);
    child.kill('SIGINT');
    const finished = await result;
    expect(finished.code).toBe(0);
    expect(finished.stderr).toContain('offline demo model');
  }, 180_000);
});

describe('rein compact', () => {
  it('compacts an idle stored session (here: nothing to compact yet) and refuses an unknown id', async () => {
    const run = await runRein(['run', '--json', 'a short session'], { cwd: box.workspace, env: box.env });
    expect(run.code).toBe(0);
    const id = (
      parseJsonLines(run.stdout).live.find((line) => line.type === 'session')!.data as { id: string }
    ).id;
    const compacted = await runRein(['compact', id], { cwd: box.workspace, env: box.env });
    expect(compacted.code).toBe(0);
    expect(compacted.stderr).toBe(
      `Nothing to compact in ${id}: the history already fits what is kept verbatim.\n`,
    );
    const unknown = await runRein(['compact', 'no-such-session'], { cwd: box.workspace, env: box.env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^rein: error SESSION_NOT_FOUND: [^\n]+\n$/);
  }, 180_000);
});
