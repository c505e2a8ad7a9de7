import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { runRein, sandbox } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Sandbox\n');
});

afterAll(() => box.cleanup());

describe('the sandbox approval mode in the CLI', () => {
  it('rein doctor reports whether the sandbox works, and what to do when it does not', async () => {
    const works = await runRein(['doctor'], { cwd: box.workspace, env: box.env });
    expect(works.stdout).toMatch(
      /^✓ sandbox: --approve sandbox works: bubblewrap \S+ creates user, pid, network and mount namespaces$/m,
    );
    const missing = join(box.root, 'no-bwrap');
    const broken = await runRein(['doctor'], {
      cwd: box.workspace,
      env: { ...box.env, REIN_BWRAP: missing },
    });
    expect(broken.stdout).toContain(
      `! sandbox: --approve sandbox is unavailable and falls back to ask: ${missing} does not exist`,
    );
    expect(broken.stdout).toContain('→ install bubblewrap');
  }, 120_000);

  it('rein run --approve sandbox warns loudly on stderr when it falls back to ask', async () => {
    const missing = join(box.root, 'no-bwrap');
    const run = await runRein(['run', '--approve', 'sandbox', 'hello'], {
      cwd: box.workspace,
      env: { ...box.env, REIN_BWRAP: missing },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('WARNING: the sandbox approval mode is not available:');
    expect(run.stderr).toContain('falls back to the ask mode');
  }, 120_000);
});
