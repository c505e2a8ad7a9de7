import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox, startRein, waitForOutput } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(`${box.workspace}/README.md`, '# Interrupted\n\n## Part\n');
});

afterAll(() => box.cleanup());

const slow = (): Record<string, string> => ({ ...box.env, REIN_DEMO_DELAY_MS: '400' });

describe('Ctrl-C', () => {
  it('SIGINT mid-stream → exit 130, the log ends agent/cancelled {user} … turn/end aborted; --continue resumes it', async () => {
    const { child, result } = startRein(['run', '--json', 'tell me slowly'], {
      cwd: box.workspace,
      env: slow(),
    });
    const seen = await waitForOutput(child, 'stdout', (text) => text.includes('"text-delta"'));
    const id = (
      parseJsonLines(seen.slice(0, seen.lastIndexOf('\n') + 1)).live.find((line) => line.type === 'session')!
        .data as { id: string }
    ).id;

    // While it runs, a second process cannot take the same session.
    const held = await runRein(['run', '--resume', id, 'me too'], { cwd: box.workspace, env: box.env });
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(/^rein: error SESSION_LOCKED: [^\n]+\n$/);

    child.kill('SIGINT');
    const finished = await result;
    expect(finished.code).toBe(130);
    const { durable } = parseJsonLines(finished.stdout);
    const types = durable.map((line) => line.type).filter((type) => type !== 'assistant/chunk');
    expect(types.at(-1)).toBe('turn/end');
    expect(durable.at(-1)!.data).toEqual({ turn: 1, reason: { kind: 'aborted' } });
    const cancelled = durable.filter((line) => line.type === 'agent/cancelled');
    expect(cancelled.map((line) => line.data)).toEqual([{ cause: { kind: 'user' } }]);
    expect(types.slice(types.indexOf('agent/cancelled'))).toEqual(
      types.includes('assistant/message')
        ? ['agent/cancelled', 'assistant/message', 'step/end', 'turn/end']
        : ['agent/cancelled', 'step/end', 'turn/end'],
    );

    // What was printed is what was stored.
    const stored = await runRein(['show', '--json', id], { cwd: box.workspace, env: box.env });
    expect(parseJsonLines(stored.stdout).durable).toEqual(durable);

    const resumed = await runRein(['run', '--continue', '--json', 'go on'], {
      cwd: box.workspace,
      env: box.env,
    });
    expect(resumed.code).toBe(0);
    const after = parseJsonLines(resumed.stdout);
    expect(after.live.find((line) => line.type === 'session')!.data).toMatchObject({ id, resumed: true });
    expect(after.durable[0]!.seq).toBe(durable.length);
    expect(after.durable.find((line) => line.type === 'turn/start')!.data).toEqual({ turn: 2 });
    expect(after.durable.at(-1)!.data).toEqual({ turn: 2, reason: { kind: 'completed' } });
  }, 240_000);

  it('a second Ctrl-C exits at once with 130 and leaves a loadable log', async () => {
    const { child, result } = startRein(['run', '--json', 'quit twice'], {
      cwd: box.workspace,
      env: { ...box.env, REIN_DEMO_DELAY_MS: '60000' },
    });
    const seen = await waitForOutput(child, 'stdout', (text) => text.includes('"request/context"'));
    const id = (
      parseJsonLines(seen.slice(0, seen.lastIndexOf('\n') + 1)).live.find((line) => line.type === 'session')!
        .data as { id: string }
    ).id;
    child.kill('SIGINT');
    child.kill('SIGINT');
    const finished = await result;
    expect(finished.code).toBe(130);
    const shown = await runRein(['show', id], { cwd: box.workspace, env: box.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('> quit twice');
  }, 240_000);
});
