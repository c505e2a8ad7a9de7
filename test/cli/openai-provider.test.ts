import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeReply, FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox, startRein, waitForOutput } from './rein-process.ts';
import { approvedToolTurnTypes } from '../support/event-sequences.ts';

const secret = 'sk-test-do-not-print-9f8e7d6c';

let box: Sandbox;
let server: FakeServer | undefined;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Fake vendor project\n');
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

afterAll(() => box.cleanup());

async function vendor(replies: FakeReply[]): Promise<Record<string, string>> {
  server = await startFakeOpenAIServer(replies);
  return { ...box.env, DEEPSEEK_API_KEY: secret, DEEPSEEK_BASE_URL: server.url };
}

const writeCall: FakeReply = {
  toolCalls: [
    {
      id: 'call_write_1',
      name: 'write_file',
      arguments: JSON.stringify({ path: 'notes.txt', content: 'hello from the model\n' }),
    },
  ],
};

function nonChunkTypes(stdout: string): string[] {
  return parseJsonLines(stdout)
    .durable.map((line) => line.type)
    .filter((type) => type !== 'assistant/chunk');
}

describe('rein run against a loopback OpenAI-compatible server (DeepSeek wire format)', () => {
  it('prints the answer and exits 0; the key goes to the vendor, not the demo', async () => {
    const env = await vendor([
      {
        text: ['Hello ', 'from the ', 'fake vendor.'],
        usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      },
    ]);
    const result = await runRein(['run', 'say hello'], { cwd: box.workspace, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Hello from the fake vendor.\n');
    expect(result.stderr).not.toContain('demo');
    expect(server!.requests).toHaveLength(1);
    expect(server!.requests[0]!.headers.authorization).toBe(`Bearer ${secret}`);
    expect(server!.requests[0]!.body).toMatchObject({
      model: 'deepseek-v4-flash',
      stream: true,
      max_tokens: 384_000,
    });
  }, 120_000);

  it('a model id the catalog does not know runs with a warning and no price, instead of UNKNOWN_MODEL', async () => {
    const env = await vendor([{ text: 'Hello from v9.', usage: { prompt_tokens: 9, completion_tokens: 3 } }]);
    const result = await runRein(['run', '--model', 'deepseek/deepseek-v9-preview', 'say hello'], {
      cwd: box.workspace,
      env,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Hello from v9.\n');
    expect(result.stderr).toContain(
      'Rein does not know deepseek/deepseek-v9-preview; it runs with a 32,000-token context assumption and no price, so its cost is not counted.',
    );
    const body = server!.requests[0]!.body as Record<string, unknown>;
    expect(body.model).toBe('deepseek-v9-preview');
    // No output limit is invented for a model nobody described: the server's own default holds.
    expect(body).not.toHaveProperty('max_tokens');
  }, 120_000);

  it('with --approve yolo a write runs', async () => {
    const env = await vendor([writeCall, { text: 'Wrote notes.txt.' }]);
    const result = await runRein(['run', '--json', '--approve', 'yolo', 'write a note'], {
      cwd: box.workspace,
      env,
    });
    expect(result.code).toBe(0);
    expect(readFileSync(join(box.workspace, 'notes.txt'), 'utf8')).toBe('hello from the model\n');
    const types = nonChunkTypes(result.stdout);
    expect(types).not.toContain('tool/approval-requested');
    const results = parseJsonLines(result.stdout).durable.filter((line) => line.type === 'tool/result');
    expect(results).toHaveLength(1);
    expect(results[0]!.data).not.toHaveProperty('error');
  }, 120_000);

  it('without a TTY, --approve ask denies a write, prints the denial, and the turn still completes', async () => {
    const env = await vendor([
      {
        toolCalls: [
          {
            id: 'call_write_2',
            name: 'write_file',
            arguments: JSON.stringify({ path: 'denied.txt', content: 'no' }),
          },
        ],
      },
      { text: 'I was not allowed to write.' },
    ]);
    const text = await runRein(['run', '--approve', 'ask', 'write another note'], {
      cwd: box.workspace,
      env,
    });
    expect(text.code).toBe(0);
    expect(existsSync(join(box.workspace, 'denied.txt'))).toBe(false);
    expect(text.stderr).toContain('⏺ write_file');
    expect(text.stderr).toMatch(/✗ denied: /);
    expect(text.stderr).toContain('✗ write_file TOOL_DENIED');
    expect(text.stdout).toBe('I was not allowed to write.\n');
    // The model's next request carries the denial as the call's result.
    const second = server!.requests[1]!.body as {
      messages: { role: string; tool_call_id?: string; content: unknown }[];
    };
    const toolMessage = second.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_write_2');
    expect(JSON.stringify(toolMessage?.content)).toContain('denied');

    const envJson = await vendor([
      {
        toolCalls: [
          {
            id: 'call_write_3',
            name: 'write_file',
            arguments: JSON.stringify({ path: 'denied.txt', content: 'no' }),
          },
        ],
      },
      { text: 'Still not allowed.' },
    ]);
    const json = await runRein(['run', '--json', 'write it again'], { cwd: box.workspace, env: envJson });
    expect(json.code).toBe(0);
    expect(nonChunkTypes(json.stdout)).toEqual(approvedToolTurnTypes);
    const decided = parseJsonLines(json.stdout).durable.find(
      (line) => line.type === 'tool/approval-decided',
    )!;
    expect(decided.data).toMatchObject({ callId: 'call_write_3', decision: 'deny' });
    expect(existsSync(join(box.workspace, 'denied.txt'))).toBe(false);
  }, 180_000);

  it('SIGINT while the vendor stream stalls → exit 130, the HTTP request is aborted, --continue resumes', async () => {
    const env = await vendor([
      { text: ['Thinking about ', 'it for ', 'a long ', 'time…'], stallAfterEvents: 2 },
      { text: 'Resumed fine.' },
    ]);
    const { child, result } = startRein(['run', '--json', 'take your time'], { cwd: box.workspace, env });
    await waitForOutput(child, 'stdout', (text) => text.includes('"text-delta"'));
    child.kill('SIGINT');
    const finished = await result;
    expect(finished.code).toBe(130);
    expect(await server!.requests[0]!.closed).toBe('aborted');
    const { durable } = parseJsonLines(finished.stdout);
    expect(durable.filter((line) => line.type === 'agent/cancelled').map((line) => line.data)).toEqual([
      { cause: { kind: 'user' } },
    ]);
    expect(durable.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { turn: 1, reason: { kind: 'aborted' } },
    });

    const resumed = await runRein(['run', '--continue', 'go on'], { cwd: box.workspace, env });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe('Resumed fine.\n');
    expect(server!.requests).toHaveLength(2);
  }, 180_000);

  it('a vendor error exits 1 with its code; an output limit exits 3', async () => {
    const env = await vendor([
      { status: 401, error: { message: 'Authentication Fails (invalid key)', type: 'authentication_error' } },
      { text: 'cut sho', finishReason: 'length' },
    ]);
    const failed = await runRein(['run', 'hello'], { cwd: box.workspace, env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^rein: error AUTH: .+$/m);
    expect(failed.stderr).not.toContain(secret);
    const limited = await runRein(['run', 'hello again'], { cwd: box.workspace, env });
    expect(limited.code).toBe(3);
    expect(limited.stdout).toBe('cut sho\n');
    expect(limited.stderr).toContain('rein: the model stopped at its output limit (max-tokens)');
  }, 180_000);
});

describe('rein doctor', () => {
  it('without a key: says the demo is used and what to set; with a key: says it is set, never prints it', async () => {
    const without = await runRein(['doctor'], { cwd: box.workspace, env: box.env });
    expect(without.code).toBe(0);
    expect(without.stdout).toMatch(/^✓ node: Node \d+\.\d+\.\d+$/m);
    expect(without.stdout).toContain(`home: ${box.home}`);
    expect(without.stdout).toMatch(
      /^! provider deepseek: no key\n {2}→ set DEEPSEEK_API_KEY to use deepseek$/m,
    );
    expect(without.stdout).toMatch(/^! model: demo\/running-example — the offline demo/m);
    expect(without.stdout).toMatch(/^✓ store: \d+ sessions?, all load$/m);

    const withKey = await runRein(['doctor', '--json'], {
      cwd: box.workspace,
      env: { ...box.env, DEEPSEEK_API_KEY: secret },
    });
    expect(withKey.code).toBe(0);
    expect(withKey.stdout).not.toContain(secret);
    expect(withKey.stdout).not.toContain(secret.slice(-4));
    const report = JSON.parse(withKey.stdout) as {
      checks: { name: string; status: string; detail: string }[];
    };
    expect(report.checks.find((check) => check.name === 'provider deepseek')).toEqual({
      name: 'provider deepseek',
      status: 'ok',
      detail: 'key set in DEEPSEEK_API_KEY',
    });
    expect(report.checks.find((check) => check.name === 'model')).toMatchObject({
      status: 'ok',
      detail: 'deepseek/deepseek-v4-flash by default',
    });
  }, 120_000);
});
