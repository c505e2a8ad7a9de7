import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Doctor\n');
});

afterAll(() => box.cleanup());

describe('rein doctor and the store', () => {
  it('reports a session that does not load, says what to fix, and exits 1', async () => {
    const run = await runRein(['run', '--json', 'hello'], { cwd: box.workspace, env: box.env });
    expect(run.code).toBe(0);
    const id = (
      parseJsonLines(run.stdout).live.find((line) => line.type === 'session')!.data as { id: string }
    ).id;
    const healthy = await runRein(['doctor'], { cwd: box.workspace, env: box.env });
    expect(healthy.code).toBe(0);
    expect(healthy.stdout).toContain('✓ store: 1 session, all load');

    // Damage a record in the middle of the log (not a torn tail, which loading repairs).
    const file = join(box.home, 'sessions', `${id}.jsonl`);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[3] = '{"this is": not json';
    writeFileSync(file, lines.join('\n'));
    const sick = await runRein(['doctor'], { cwd: box.workspace, env: box.env });
    expect(sick.code).toBe(1);
    expect(sick.stdout).toMatch(new RegExp(`^✗ store: 1 of 1 sessions do not load: ${id} \\(`, 'm'));
    expect(sick.stdout).toContain('→ keep what is readable with rein fork --salvage <id>');
    expect(sick.stdout).toContain('1 problem to fix.');

    const salvaged = await runRein(['fork', '--salvage', id], { cwd: box.workspace, env: box.env });
    expect(salvaged.code).toBe(0);
    const forkId = salvaged.stdout.trim();
    const shown = await runRein(['show', forkId], { cwd: box.workspace, env: box.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`parent   ${id} (fork)`);
  }, 180_000);
});
