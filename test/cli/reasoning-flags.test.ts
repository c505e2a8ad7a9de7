import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { runRein, sandbox } from './rein-process.ts';

let box: Sandbox;
let server: FakeServer | undefined;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(join(box.home, 'config.json'), { force: true });
});
afterAll(() => box.cleanup());

describe('reasoning controls on rein run', () => {
  it('--thinking 4096 on Anthropic sends thinking with that budget', async () => {
    server = await startFakeAnthropicServer([{ text: 'thought about it' }]);
    const env = { ...box.env, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url };
    const result = await runRein(
      ['run', '--model', 'anthropic/claude-sonnet-4-6', '--thinking', '4096', 'think first'],
      { cwd: box.workspace, env },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('thought about it\n');
    expect(server.requests[0]!.body).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 128_000,
      thinking: { type: 'enabled', budget_tokens: 4096 },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'think first' }] }],
    });
  }, 120_000);

  it('--reasoning-effort high on DeepSeek sends reasoning_effort; a config model entry sets the default', async () => {
    server = await startFakeOpenAIServer([{ text: 'one' }, { text: 'two' }]);
    const env = { ...box.env, DEEPSEEK_API_KEY: 'k', DEEPSEEK_BASE_URL: server.url };
    const flagged = await runRein(['run', '--reasoning-effort', 'high', 'go'], { cwd: box.workspace, env });
    expect(flagged.code).toBe(0);
    expect(server.requests[0]!.body).toMatchObject({ model: 'deepseek-v4-flash', reasoning_effort: 'high' });
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, 'config.json'),
      JSON.stringify({ models: { 'deepseek/deepseek-v4-flash': { reasoningEffort: 'max' } } }),
    );
    const configured = await runRein(['run', 'go'], { cwd: box.workspace, env });
    expect(configured.code).toBe(0);
    expect(server.requests[1]!.body).toMatchObject({ reasoning_effort: 'max' });
  }, 120_000);

  it('refuses both controls at once, and a --thinking value that is not a number', async () => {
    const both = await runRein(['run', '--reasoning-effort', 'low', '--thinking', 'go'], {
      cwd: box.workspace,
      env: box.env,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(
      "use either '--reasoning-effort <level>' or '--thinking [budget]', not both",
    );
    const bad = await runRein(['run', '--thinking=lots', 'go'], { cwd: box.workspace, env: box.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--thinking' takes a whole number, not 'lots'");
  }, 120_000);
});
