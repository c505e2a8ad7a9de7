import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(`${box.workspace}/README.md`, '# Sessions project\n\n## Notes\n');
});

afterAll(() => box.cleanup());

interface Row {
  id: string;
  title?: string;
  cwd?: string;
  turns: number;
  parentSession?: string;
  cost?: number;
}

async function sessionRows(): Promise<Row[]> {
  const result = await runRein(['sessions', '--json'], { cwd: box.workspace, env: box.env });
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Row[];
}

describe('rein sessions, show, fork and rm against real stored sessions', () => {
  it('lists, shows, forks, resumes the fork and removes', async () => {
    const first = await runRein(['run', '--json', 'first question'], { cwd: box.workspace, env: box.env });
    expect(first.code).toBe(0);
    const firstId = (
      parseJsonLines(first.stdout).live.find((line) => line.type === 'session')!.data as { id: string }
    ).id;
    const second = await runRein(['run', 'second question'], { cwd: box.workspace, env: box.env });
    expect(second.code).toBe(0);

    const table = await runRein(['sessions'], { cwd: box.workspace, env: box.env });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +TITLE +CWD +UPDATED +TURNS +COST$/);
    expect(lines).toHaveLength(3);
    // Newest first.
    expect(lines[1]).toContain('second question');
    expect(lines[2]).toContain('first question');
    expect(lines[2]).toContain(firstId);
    expect(lines[2]).toMatch(/ 1 +\$0\.0000$/);

    const shown = await runRein(['show', firstId], { cwd: box.workspace, env: box.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`session ${firstId}`);
    expect(shown.stdout).toContain('> first question');
    expect(shown.stdout).toContain('⏺ read_file {"path":"README.md"}');
    expect(shown.stdout).toContain('✓ read_file (3 lines)');
    expect(shown.stdout).toContain('- Sessions project');
    expect(shown.stdout).toContain('── turn 1: completed ──');

    const raw = await runRein(['show', '--json', firstId], { cwd: box.workspace, env: box.env });
    const stored = parseJsonLines(raw.stdout).durable;
    expect(stored).toEqual(parseJsonLines(first.stdout).durable);

    const fork = await runRein(['fork', firstId, '--at', '1'], { cwd: box.workspace, env: box.env });
    expect(fork.code).toBe(0);
    const forkId = fork.stdout.trim();
    expect(forkId).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]+$/);
    expect(forkId).not.toBe(firstId);
    const rows = await sessionRows();
    expect(rows).toHaveLength(3);
    expect(rows.find((row) => row.id === forkId)).toMatchObject({ parentSession: firstId, turns: 1 });

    // Resumed from another directory, the session keeps its own workspace (the tools are confined to it).
    const resumed = await runRein(['run', '--resume', forkId, '--json', 'and a follow-up'], {
      cwd: box.root,
      env: box.env,
    });
    expect(resumed.code).toBe(0);
    const resumedLog = parseJsonLines(resumed.stdout);
    expect(resumedLog.live.find((line) => line.type === 'session')!.data).toMatchObject({
      id: forkId,
      cwd: box.workspace,
      resumed: true,
    });
    expect(resumedLog.durable.find((line) => line.type === 'turn/start')!.data).toEqual({ turn: 2 });
    const readResult = resumedLog.durable.find((line) => line.type === 'tool/result')!;
    expect(readResult.data).not.toHaveProperty('error');
    expect(resumedLog.durable.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { turn: 2, reason: { kind: 'completed' } },
    });
    const elsewhere = await runRein(['run', '--resume', forkId, '--cwd', box.root, 'no'], {
      cwd: box.workspace,
      env: box.env,
    });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(
      /^rein: session \S+ works in \S+; leave out '--cwd' to resume it there\n/,
    );

    const badFork = await runRein(['fork', firstId, '--at', '7'], { cwd: box.workspace, env: box.env });
    expect(badFork.code).toBe(1);
    expect(badFork.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(badFork.stderr).toMatch(/^rein: error \w+: /);

    const removed = await runRein(['rm', firstId], { cwd: box.workspace, env: box.env });
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(`removed ${firstId}\n`);
    expect((await sessionRows()).map((row) => row.id)).not.toContain(firstId);
    const gone = await runRein(['show', firstId], { cwd: box.workspace, env: box.env });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^rein: error SESSION_NOT_FOUND: .*\n$/);
    expect(gone.stdout).toBe('');
  }, 240_000);
});
