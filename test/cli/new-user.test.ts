import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskSessionStore } from '../../src/index.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox } from './rein-process.ts';

let box: Sandbox;

beforeAll(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# New user\n\nA project.\n\n## Use\n\nrun it\n');
});

afterAll(() => box.cleanup());

const rein = (args: string[], env: Record<string, string> = {}, input?: string) =>
  runRein(args, {
    cwd: box.workspace,
    env: { ...box.env, ...env },
    ...(input !== undefined ? { input } : {}),
  });

async function sessionIds(): Promise<string[]> {
  const listed = await rein(['sessions', '--json']);
  return (JSON.parse(listed.stdout) as { id: string }[]).map((row) => row.id);
}

describe('what a new user hits in the CLI', () => {
  it('rein sessions shows a DeepSeek session’s cost when no key is set at listing time', async () => {
    let server: FakeServer | undefined;
    try {
      server = await startFakeOpenAIServer([
        {
          text: ['Priced answer.'],
          usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 },
        },
      ]);
      const run = await rein(['run', '--model', 'deepseek/deepseek-chat', 'price this'], {
        DEEPSEEK_API_KEY: 'sk-test-cost',
        DEEPSEEK_BASE_URL: server.url,
      });
      expect(run.code).toBe(0);
    } finally {
      await server?.close();
    }
    const listed = await rein(['sessions', '--json']);
    const row = (JSON.parse(listed.stdout) as { title: string; cost?: number }[]).find(
      (entry) => entry.title === 'price this',
    );
    expect(row?.cost).toBeGreaterThan(0);
    const table = await rein(['sessions']);
    const line = table.stdout.split('\n').find((text) => text.includes('price this'))!;
    expect(line).toMatch(/\$\d+\.\d+$/);
  }, 120_000);

  it('plain rein run keeps the text of separate steps apart and ends with one usage-and-cost line on stderr', async () => {
    const result = await rein(['run', '--approve', 'yolo', 'what is this?']);
    expect(result.code).toBe(0);
    // Three steps (read, count, summary): their texts are separated by blank lines, never run together.
    expect(result.stdout).toContain("about.\n\nNow I'll count");
    expect(result.stdout).toMatch(/approval\)\.\n\n\*Demo model/);
    expect(result.stdout.endsWith('\n')).toBe(true);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^tokens [\d,]+ in · [\d,]+ out · \$0\.00$/);
  }, 120_000);

  it('show, fork and compact accept a unique id prefix and --last; a prefix of several ids is refused', async () => {
    const [latest] = await sessionIds();
    const shown = await rein(['show', latest!.slice(0, 8)]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`session ${latest}`);
    const last = await rein(['show', '--last']);
    expect(last.stdout).toContain(`session ${latest}`);
    // Two sessions whose ids share a prefix, made through the real store.
    const store = new DiskSessionStore({ root: join(box.home, 'sessions') });
    await store.fork(latest!, { id: 'feedbeef-0000-4000-8000-000000000001' });
    await store.fork(latest!, { id: 'feedbeef-0000-4000-8000-000000000002' });
    const ambiguous = await rein(['show', 'feedbeef']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('error AMBIGUOUS_SESSION_ID');
    expect(ambiguous.stderr).toContain('feedbeef-0000-4000-8000-000000000001');
    const unique = await rein(['show', 'feedbeef-0000-4000-8000-0000000000']);
    expect(unique.code).toBe(1);
    const exact = await rein(['show', 'feedbeef-0000-4000-8000-000000000002']);
    expect(exact.code).toBe(0);
    const missing = await rein(['show', 'nosuchsession']);
    expect(missing.stderr).toContain('error SESSION_NOT_FOUND');
  }, 120_000);

  it('a fork is titled after its parent and the turn it forks at', async () => {
    const made = await rein(['run', '--approve', 'yolo', 'the original question']);
    expect(made.code).toBe(0);
    const forked = await rein(['fork', '--last', '--at', '1']);
    expect(forked.code).toBe(0);
    const forkId = forked.stdout.trim();
    const again = await rein(['fork', forkId.slice(0, 12)]);
    const listed = JSON.parse((await rein(['sessions', '--json'])).stdout) as { id: string; title: string }[];
    expect(listed.find((row) => row.id === forkId)?.title).toBe('the original question (fork at turn 1)');
    // A fork of a fork names its own turn once, not a chain of marks.
    expect(listed.find((row) => row.id === again.stdout.trim())?.title).toBe(
      'the original question (fork at turn 1)',
    );
  }, 120_000);

  it('refuses a prompt far larger than the context window before sending, with the numbers and what to do', async () => {
    const before = await sessionIds();
    const huge = 'lorem ipsum '.repeat(450_000);
    const result = await rein(['run', '--json', '-'], {}, huge);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error PROMPT_TOO_LARGE');
    expect(result.stderr).toMatch(
      /about [\d,]+ tokens \(5\.4 MB\), \d+\.\d× the 128,000-token context window/,
    );
    expect(result.stderr).toContain('Save it as a file in the workspace');
    // Nothing reached a model: no turn, no user message in any log.
    const { durable } = parseJsonLines(result.stdout);
    expect(durable.filter((line) => line.type === 'user/message')).toEqual([]);
    expect(await sessionIds()).toEqual(before);
  }, 120_000);
});
