import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox, startRein, waitForOutput } from './rein-process.ts';

const readme = [
  '# Rein test project',
  '',
  'A small project used by the CLI tests.',
  '',
  '## Install',
  '',
  'npm install',
  '',
  '## Usage',
  '',
  '### From the terminal',
  '',
  'rein run',
  '',
].join('\n');

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(`${box.workspace}/README.md`, readme);
});

afterAll(() => box.cleanup());

describe('rein run with the offline demo model', () => {
  it('says it uses the demo, reads the README and prints a real summary of its headings; exit 0', async () => {
    const result = await runRein(['run', 'what is this project?'], { cwd: box.workspace, env: box.env });
    expect(result.stderr).toContain('offline demo model demo/running-example');
    expect(result.stderr).toContain('⏺ read_file {"path":"README.md"}');
    expect(result.stderr).toContain('✓ read_file');
    expect(result.stdout).toContain('Demo model');
    expect(result.stdout).toContain('`README.md` has 13 lines and 4 headings');
    expect(result.stdout).toMatch(/- Rein test project\n {2}- Install\n {2}- Usage\n {4}- From the terminal/);
    expect(result.stdout).toContain('A small project used by the CLI tests.');
    expect(result.code).toBe(0);
  }, 120_000);

  it('--json: one JSON object per line, contiguous seq from 0, the seed order, live lines marked', async () => {
    const result = await runRein(['-p', 'summarize this project', '--json'], {
      cwd: box.workspace,
      env: box.env,
    });
    expect(result.code).toBe(0);
    const { durable, live } = parseJsonLines(result.stdout);
    expect(durable.map((line) => line.seq)).toEqual(durable.map((_, index) => index));
    for (const line of durable) {
      expect(Object.keys(line).sort()).toEqual(['data', 'seq', 'time', 'type']);
      expect(typeof line.time).toBe('number');
    }
    expect(durable.map((line) => line.type).filter((type) => type !== 'assistant/chunk')).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/message',
      'tool/call',
      // Without a terminal nobody can answer, so the shell step's approval is recorded and denied.
      'tool/approval-requested',
      'tool/approval-decided',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    expect(durable.at(-1)!.data).toEqual({ turn: 1, reason: { kind: 'completed' } });
    expect(live.map((line) => line.type)).toEqual([
      'notice',
      'session',
      'agent/status',
      'agent/status',
      'exit',
    ]);
    expect(live.filter((line) => line.type === 'agent/status').map((line) => line.data)).toEqual([
      { status: 'running' },
      { status: 'idle' },
    ]);
  }, 120_000);

  it('reads the prompt from stdin, and stops a turn at --max-steps with exit 1', async () => {
    const result = await runRein(['run', '--max-steps', '1'], {
      cwd: box.workspace,
      env: box.env,
      input: 'read the readme\n',
    });
    expect(result.stderr).toContain('⏺ read_file');
    expect(result.stderr).toMatch(/^rein: error TURN_BLOCKED: the turn reached --max-steps 1$/m);
    expect(result.stdout).not.toContain('has 13 lines');
    expect(result.code).toBe(1);
  }, 120_000);

  it('an unknown model is a clear error with exit 1, and nothing is written', async () => {
    const before = await runRein(['sessions', '--json'], { cwd: box.workspace, env: box.env });
    const count = (JSON.parse(before.stdout) as unknown[]).length;
    const unknownModel = await runRein(['run', '--model', 'demo/gpt-17', 'hello'], {
      cwd: box.workspace,
      env: box.env,
    });
    expect(unknownModel.code).toBe(1);
    expect(unknownModel.stderr).toBe(
      "rein: error UNKNOWN_MODEL: provider 'demo' has no model 'gpt-17' (known: running-example)\n",
    );
    const unknownProvider = await runRein(['run', '-m', 'nowhere/model', 'hello'], {
      cwd: box.workspace,
      env: box.env,
    });
    expect(unknownProvider.code).toBe(1);
    expect(unknownProvider.stderr).toMatch(
      /^rein: error UNKNOWN_PROVIDER: unknown provider 'nowhere' \(known: deepseek, anthropic, openai, demo\); add custom ones under "providers" in \S+config\.json\n$/,
    );
    const after = await runRein(['sessions', '--json'], { cwd: box.workspace, env: box.env });
    expect((JSON.parse(after.stdout) as unknown[]).length).toBe(count);
  }, 120_000);

  it('a reader that goes away (| head) stops the output, not the run: exit 0 and the whole turn is stored', async () => {
    const { child, result } = startRein(['run', '--json', 'read and leave early'], {
      cwd: box.workspace,
      env: { ...box.env, REIN_DEMO_DELAY_MS: '20' },
    });
    const seen = await waitForOutput(child, 'stdout', (text) => text.includes('"type":"session"'));
    const id = (
      JSON.parse(seen.split('\n').find((line) => line.includes('"type":"session"'))!) as {
        data: { id: string };
      }
    ).data.id;
    child.stdout!.destroy();
    const finished = await result;
    expect(finished.code).toBe(0);
    expect(finished.stderr).toBe('');
    const stored = await runRein(['show', '--json', id], { cwd: box.workspace, env: box.env });
    expect(parseJsonLines(stored.stdout).durable.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { turn: 1, reason: { kind: 'completed' } },
    });
  }, 120_000);
});
