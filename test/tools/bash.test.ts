import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { eventsOf } from '../../src/testing/index.ts';
import { loggedResults, permissionFixture } from '../plugins/permissions/support.ts';
import type { Sandbox } from './support.ts';
import { metaOf, run, sandbox, textOf, toolContext, toolsOf } from './support.ts';

let box: Sandbox;
let tools: Record<string, Tool>;

beforeEach(() => {
  box = sandbox('rein-bash-');
  tools = toolsOf(box);
});
afterEach(() => box.cleanup());

// Alive means present in /proc and not a zombie (an exited process waiting to be reaped is dead).
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function pidsIn(text: string): number[] {
  return [...text.matchAll(/pid:(\d+)/g)].map((match) => Number(match[1]));
}

async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

// Starts a shell, a subshell, a background job and a TERM-ignoring grandchild, all in one group.
const spawnFamily =
  'echo pid:$$ >> pids; (sleep 120 & echo pid:$! >> pids; wait) & ' +
  'bash -c \'trap "" TERM; echo pid:$$ >> pids; while true; do sleep 1; done\' & ' +
  'sleep 120 & echo pid:$! >> pids; echo started; wait';

describe('bash', () => {
  it('returns merged stdout and stderr with the exit code, runs in the workspace with stdin closed', async () => {
    const result = await run(tools.bash, {
      command: 'pwd; echo out; echo err >&2; read -r line || echo no-stdin; exit 3',
    });
    expect(textOf(result.output)).toBe(`${box.workspace}\nout\nerr\nno-stdin\n[exit code 3]`);
    expect(metaOf(result.output)).toMatchObject({
      exitCode: 3,
      signal: null,
      outputBytes: expect.any(Number),
    });
    const sub = await run(tools.bash, { command: 'pwd', cwd: 'sub' });
    expect(sub.error).toMatchObject({ code: 'NOT_A_DIRECTORY' });
    expect((await run(tools.bash, { command: 'true', cwd: '../outside' })).error).toMatchObject({
      code: 'PATH_OUTSIDE_WORKSPACE',
    });
    expect(textOf((await run(tools.bash, { command: 'true' })).output)).toBe('(no output)\n[exit code 0]');
  });

  it('does not pass secret-looking environment variables unless allowed', async () => {
    const names = [
      'REIN_TEST_API_KEY',
      'REIN_TEST_SECRET',
      'REIN_TEST_TOKEN',
      'REIN_TEST_PASSWORD',
      'REIN_TEST_PLAIN',
    ];
    for (const name of names) process.env[name] = `value-of-${name}`;
    try {
      const command = names.map((name) => `echo ${name}=\${${name}:-unset}`).join('; ');
      const strict = textOf((await run(tools.bash, { command })).output);
      expect(strict).toBe(
        'REIN_TEST_API_KEY=unset\nREIN_TEST_SECRET=unset\nREIN_TEST_TOKEN=unset\nREIN_TEST_PASSWORD=unset\n' +
          'REIN_TEST_PLAIN=value-of-REIN_TEST_PLAIN\n[exit code 0]',
      );
      const allowing = toolsOf(box, { allowEnv: ['REIN_TEST_TOKEN', 'REIN_TEST_*KEY'] });
      const relaxed = textOf((await run(allowing.bash, { command })).output);
      expect(relaxed).toContain('REIN_TEST_TOKEN=value-of-REIN_TEST_TOKEN');
      expect(relaxed).toContain('REIN_TEST_API_KEY=value-of-REIN_TEST_API_KEY');
      expect(relaxed).toContain('REIN_TEST_SECRET=unset');
    } finally {
      for (const name of names) delete process.env[name];
    }
  });

  it('on timeout kills the whole process group, TERM-ignoring members included', async () => {
    const result = await run(tools.bash, { command: spawnFamily, timeout_ms: 1_500 });
    const output = result.output as { isError: boolean; content: string; meta: Record<string, unknown> };
    expect(output.isError).toBe(true);
    expect(output.content).toMatch(
      /^Error: the command timed out after 1500 ms; its process group was killed\.\nstarted\n/,
    );
    expect(output.meta).toMatchObject({ timedOut: true });
    const pids = pidsIn(readFileSync(join(box.workspace, 'pids'), 'utf8'));
    expect(pids).toHaveLength(4);
    expect(pids.filter(alive)).toEqual([]);
  }, 30_000);

  it('on abort kills the whole process group before the call settles', async () => {
    const controller = new AbortController();
    const context = await toolContext(controller.signal);
    const pending = run(tools.bash, { command: spawnFamily }, context);
    const pidFile = join(box.workspace, 'pids');
    await waitFor(() => existsSync(pidFile) && pidsIn(readFileSync(pidFile, 'utf8')).length === 4);
    const pids = pidsIn(readFileSync(pidFile, 'utf8'));
    expect(pids.every(alive)).toBe(true);
    controller.abort();
    const result = await pending;
    expect(result.error).toMatchObject({ code: 'ABORTED' });
    expect(pids.filter(alive)).toEqual([]);
  }, 30_000);

  it('leaves no background job behind after the command exits', async () => {
    const result = await run(tools.bash, { command: 'sleep 120 & echo pid:$!' });
    const [pid] = pidsIn(textOf(result.output));
    expect(pid).toBeGreaterThan(0);
    await waitFor(() => !alive(pid!), 10_000);
  }, 30_000);

  it('Stop while bash runs under an agent: the call gets its aborted result and the group is gone', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'yolo',
      responses: [{ toolCalls: [{ id: 'b', name: 'bash', arguments: { command: spawnFamily } }] }],
    });
    f.agent.followup('run the family');
    const pidFile = join(box.workspace, 'pids');
    await waitFor(() => existsSync(pidFile) && pidsIn(readFileSync(pidFile, 'utf8')).length === 4);
    const pids = pidsIn(readFileSync(pidFile, 'utf8'));
    f.agent.cancel({ kind: 'user' });
    await f.agent.whenIdle();
    expect(pids.filter(alive)).toEqual([]);
    expect(loggedResults(f.agent)).toEqual([
      { callId: 'b', text: 'Error: tool call aborted', isError: true, code: 'ABORTED' },
    ]);
    expect(eventsOf(f.agent.session, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    await f.harness.dispose();
  }, 30_000);
});
