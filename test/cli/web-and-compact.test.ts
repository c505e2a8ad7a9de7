import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox, startRein, waitForOutput } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Web project\n');
});

afterAll(() => box.cleanup());

/** Starts `rein web` on a free port in the sandbox's workspace and waits for the URL it prints. */
async function startWeb(env: Record<string, string>): Promise<ReturnType<typeof startRein> & { url: URL }> {
  const started = startRein(['web', '--port', '0'], { cwd: box.workspace, env });
  const printed = await waitForOutput(
    started.child,
    'stdout',
    (text) => /Rein is running at \S+\n/.test(text),
    120_000,
  );
  return { ...started, url: new URL(/Rein is running at (\S+)\n/.exec(printed)![1]!) };
}

describe('rein web', () => {
  it('starts the server on loopback, prints its URL with the token, serves the API, and stops on Ctrl-C', async () => {
    const { child, result, url } = await startWeb(box.env);
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

describe('rein web settings', () => {
  it('applies a provider key saved in the settings to the running server: the next request carries it', async () => {
    const secret = 'sk-saved-in-the-web-ui-5a4b';
    const vendor = await startFakeOpenAIServer([{ text: ['Hello ', 'with the saved key.'] }]);
    // A home of its own: the saved key makes DeepSeek the default route of every later run there.
    const env = { ...box.env, REIN_HOME: join(box.root, 'settings-home'), DEEPSEEK_BASE_URL: vendor.url };
    const { child, result, url } = await startWeb(env);
    try {
      const token = url.searchParams.get('token')!;
      const api = async (method: string, path: string, body?: unknown): Promise<Response> =>
        fetch(new URL(path, url), {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      const route = { provider: 'deepseek', model: 'deepseek-chat', cwd: box.workspace };
      // Without a key DeepSeek is not callable.
      const refused = await api('POST', '/api/sessions', route);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('NO_ADAPTER');

      const saved = await api('PUT', '/api/settings/keys/deepseek', { key: secret });
      expect(saved.status).toBe(200);
      const settings = (await saved.json()) as {
        providers: { provider: string; configured: boolean }[];
        help: string;
      };
      expect(settings.providers.find((entry) => entry.provider === 'deepseek')?.configured).toBe(true);
      expect(settings.help).toContain('without a restart');
      expect(JSON.stringify(settings)).not.toContain(secret);

      const created = await api('POST', '/api/sessions', route);
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      expect((await api('POST', `/api/sessions/${id}/messages`, { text: 'hello' })).status).toBe(202);
      const deadline = Date.now() + 60_000;
      while (vendor.requests.length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(vendor.requests).toHaveLength(1);
      expect(vendor.requests[0]!.headers.authorization).toBe(`Bearer ${secret}`);
      expect((vendor.requests[0]!.body as { model: string }).model).toBe('deepseek-chat');
    } finally {
      child.kill('SIGINT');
      await result;
      await vendor.close();
    }
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
