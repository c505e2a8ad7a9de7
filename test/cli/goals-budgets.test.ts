import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeReply, FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, reinBin, runRein, sandbox, waitForOutput } from './rein-process.ts';

// `script` (util-linux) gives the real binary a pseudo-terminal, as an interactive user has.
const scriptBin = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));

let box: Sandbox;
let server: FakeServer | undefined;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Goals and budgets project\n');
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

afterAll(() => box.cleanup());

async function vendor(replies: FakeReply[]): Promise<Record<string, string>> {
  server = await startFakeOpenAIServer(replies);
  return { ...box.env, DEEPSEEK_API_KEY: 'sk-test-goals', DEEPSEEK_BASE_URL: server.url };
}

function types(stdout: string): string[] {
  return parseJsonLines(stdout)
    .durable.map((line) => line.type)
    .filter((type) => type !== 'assistant/chunk');
}

const readCall: FakeReply = {
  toolCalls: [{ id: 'call_read_1', name: 'read_file', arguments: JSON.stringify({ path: 'README.md' }) }],
};

const completeCall: FakeReply = {
  toolCalls: [
    {
      id: 'call_done_1',
      name: 'goal_complete',
      arguments: JSON.stringify({ evidence: 'Read README.md: it has one heading.' }),
    },
  ],
};

describe('rein run --goal', () => {
  it('--goal with a prompt: the goal is set before the prompt runs; one continuation round, goal_complete → exit 0', async () => {
    const env = await vendor([readCall, { text: 'The README has one heading.' }, completeCall]);
    const result = await runRein(
      ['run', '--json', '--approve', 'yolo', '--goal', 'describe the README', 'look at the project'],
      { cwd: box.workspace, env },
    );
    expect(result.code).toBe(0);
    const { durable } = parseJsonLines(result.stdout);
    expect(durable[0]).toMatchObject({
      type: 'goal/set',
      data: { objective: 'describe the README', maxRounds: 10 },
    });
    const goalTypes = types(result.stdout).filter((type) => type.startsWith('goal/'));
    expect(goalTypes).toEqual(['goal/set', 'goal/continued', 'goal/completed']);
    expect(durable.find((line) => line.type === 'goal/completed')!.data).toMatchObject({
      callId: 'call_done_1',
      evidence: 'Read README.md: it has one heading.',
      rounds: 1,
    });
    expect(durable.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } });
    // The prompt is the work; the continuation round restates the objective.
    expect(JSON.stringify(server!.requests[0]!.body)).toContain('look at the project');
    expect(JSON.stringify(server!.requests[2]!.body)).toContain(
      'Goal (continuation 1 of 10): describe the README',
    );
  }, 120_000);

  it('"/goal objective" as the prompt sets the goal; goal notices are printed on stderr', async () => {
    const env = await vendor([completeCall]);
    const result = await runRein(['run', '--approve', 'yolo', '/goal summarize the README'], {
      cwd: box.workspace,
      env,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('◎ Goal set: summarize the README (up to 10 continuation rounds)');
    expect(result.stderr).toContain(
      '✓ Goal completed after 0 continuation rounds: Read README.md: it has one heading.',
    );
    expect(JSON.stringify(server!.requests[0]!.body)).toContain('Goal: summarize the README');
  }, 120_000);

  it('a goal the model never advances stops with the reason on stderr', async () => {
    const env = await vendor([{ text: 'Done, I think.' }, { text: 'Done, I think.' }]);
    const result = await runRein(['run', '--goal', 'tidy the README'], { cwd: box.workspace, env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('◎ Goal not yet complete — continuation round 1 of 10');
    expect(result.stderr).toContain(
      '■ Goal stopped: the last round made no progress (no tool effects and nothing new said)',
    );
  }, 120_000);

  it('bad goal or budget input is a usage error (exit 2)', async () => {
    const both = await runRein(['run', '--goal', 'a', '/goal b'], { cwd: box.workspace, env: box.env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give the goal once: either '--goal' or '/goal …'");
    const empty = await runRein(['run', '/goal   '], { cwd: box.workspace, env: box.env });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('missing objective');
    const cost = await runRein(['run', '--budget-cost', 'lots', 'hi'], { cwd: box.workspace, env: box.env });
    expect(cost.code).toBe(2);
    expect(cost.stderr).toContain("option '--budget-cost' needs a positive amount of US dollars, not 'lots'");
  }, 120_000);
});

describe('rein run --budget-*', () => {
  it('a reached budget pauses the run: exit 4 with the limit and how to continue; --resume with more completes', async () => {
    const env = await vendor([readCall, { text: 'The README has one heading.' }]);
    const paused = await runRein(['run', '--json', '--budget-steps', '1', 'read the README'], {
      cwd: box.workspace,
      env,
    });
    expect(paused.code).toBe(4);
    expect(server!.requests).toHaveLength(1);
    const { durable, live } = parseJsonLines(paused.stdout);
    const id = (live.find((line) => line.type === 'session')!.data as { id: string }).id;
    expect(types(paused.stdout).slice(-4)).toEqual(['tool/result', 'step/end', 'budget/reached', 'turn/end']);
    expect(durable.find((line) => line.type === 'budget/reached')!.data).toEqual({
      turn: 1,
      step: 2,
      limit: 'turn.steps',
      used: 1,
      max: 1,
    });
    expect(durable.at(-1)!.data).toEqual({ turn: 1, reason: { kind: 'blocked' } });
    expect(paused.stderr).toContain('rein: budget reached (turn.steps: 1/1); the work is paused, not lost.');
    expect(paused.stderr).toContain(
      `rein: continue with: rein run --resume ${id} --budget-steps 2 "continue"`,
    );

    const resumed = await runRein(['run', '--json', '--resume', id, '--budget-steps', '2', 'continue'], {
      cwd: box.workspace,
      env,
    });
    expect(resumed.code).toBe(0);
    expect(server!.requests).toHaveLength(2);
    expect(types(resumed.stdout)).not.toContain('budget/reached');
    expect(parseJsonLines(resumed.stdout).durable.at(-1)!.data).toEqual({
      turn: 2,
      reason: { kind: 'completed' },
    });

    const shown = await runRein(['show', id], { cwd: box.workspace, env: box.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('■ Budget reached: per-turn steps — used 1 of 1. The work is paused.');
  }, 120_000);
});

describe('rein show with subagents', () => {
  it('prints the child session id under the task call, and the child is shown by that id', async () => {
    const env = await vendor([
      {
        toolCalls: [
          { id: 'call_task_1', name: 'task', arguments: JSON.stringify({ prompt: 'count the headings' }) },
        ],
      },
      { text: 'One heading.' },
      { text: 'The subagent found one heading.' },
    ]);
    const run = await runRein(['run', '--json', '--approve', 'yolo', 'delegate the counting'], {
      cwd: box.workspace,
      env,
    });
    expect(run.code).toBe(0);
    const { durable, live } = parseJsonLines(run.stdout);
    const id = (live.find((line) => line.type === 'session')!.data as { id: string }).id;
    const result = durable.find((line) => line.type === 'tool/result')!.data as {
      meta: { childSessionId: string };
    };
    const child = result.meta.childSessionId;
    expect(child).toMatch(/\S/);
    expect(child).not.toBe(id);

    const shown = await runRein(['show', id], { cwd: box.workspace, env: box.env });
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    const callLine = lines.findIndex((line) => line.startsWith('⏺ task '));
    expect(callLine).toBeGreaterThanOrEqual(0);
    expect(lines.slice(callLine + 1, callLine + 3)).toEqual([
      '  ✓ task (1 line)',
      `    ↳ subagent session ${child} (rein show ${child})`,
    ]);

    const childShown = await runRein(['show', child], { cwd: box.workspace, env: box.env });
    expect(childShown.code).toBe(0);
    expect(childShown.stdout).toContain(`parent   ${id}`);
    expect(childShown.stdout).toContain('One heading.');
  }, 120_000);
});

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `rein run` on a pseudo-terminal (stdout and stderr both arrive on the child's stdout). */
function onTerminal(
  args: readonly string[],
  env: Record<string, string>,
): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  const command = [process.execPath, reinBin, 'run', ...args].map(shellQuote).join(' ');
  const child = spawn(scriptBin!, ['-qfec', command, '/dev/null'], {
    cwd: box.workspace,
    env: { ...process.env, ...env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', REIN_MODEL: '', TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8');
  let all = '';
  child.stdout!.on('data', (text: string) => (all += text));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, output: () => all };
}

describe.skipIf(scriptBin === undefined)('a reached budget on a terminal', () => {
  const question = 'Budget reached (turn.steps: 1/1). Raise and continue? [y/N]';

  it('"y" doubles the limit and the run goes on to completion in the same process', async () => {
    const env = await vendor([readCall, { text: 'Resumed: the README has one heading.' }]);
    const { child, exited, output } = onTerminal(
      ['--approve', 'yolo', '--budget-steps', '1', 'read the README'],
      env,
    );
    await waitForOutput(child, 'stdout', (text) => text.includes(question), 120_000);
    expect(server!.requests).toHaveLength(1);
    child.stdin!.write('y\r');
    expect(await exited).toBe(0);
    expect(output()).toContain('◎ Budget raised: per-turn steps → 2');
    expect(output()).toContain('Resumed: the README has one heading.');
    expect(server!.requests).toHaveLength(2);
  }, 180_000);

  it('--max-turns bounds the turns a run starts: "y" raises the budget, the next turn is refused', async () => {
    const env = await vendor([readCall, { text: 'never asked for' }]);
    const { child, exited, output } = onTerminal(
      ['--approve', 'yolo', '--budget-steps', '1', '--max-turns', '1', 'read the README'],
      env,
    );
    await waitForOutput(child, 'stdout', (text) => text.includes(question), 120_000);
    child.stdin!.write('y\r');
    expect(await exited).toBe(1);
    expect(output()).toContain('rein: error TURN_BLOCKED: the run reached --max-turns 1');
    // The continuation turn opened and was refused before it asked the model anything.
    expect(server!.requests).toHaveLength(1);
    const invalid = await runRein(['run', '--max-turns', '0', 'hi'], { cwd: box.workspace, env: box.env });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('--max-turns');
  }, 180_000);

  it('Enter alone (no) pauses: the limit and how to continue are printed, exit 4', async () => {
    const env = await vendor([readCall]);
    const { child, exited, output } = onTerminal(
      ['--approve', 'yolo', '--budget-steps', '1', 'read it'],
      env,
    );
    await waitForOutput(child, 'stdout', (text) => text.includes(question), 120_000);
    child.stdin!.write('\r');
    expect(await exited).toBe(4);
    expect(output()).toContain('rein: budget reached (turn.steps: 1/1); the work is paused, not lost.');
    expect(output()).toMatch(/rein: continue with: rein run --resume \S+ --budget-steps 2 "continue"/);
    expect(server!.requests).toHaveLength(1);
  }, 180_000);
});
