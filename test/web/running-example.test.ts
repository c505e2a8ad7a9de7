import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Tool } from '../../src/index.ts';
import { builtinTools } from '../../src/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { serverFixture, typesOf } from '../server/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage } from './support.ts';
import { approvedToolTurnTypes } from '../support/event-sequences.ts';

// Screenshots for the README are refreshed with REIN_SCREENSHOTS=1.
const screenshotDir =
  process.env.REIN_SCREENSHOTS === '1' ? resolve(import.meta.dirname, '../../docs/screenshots') : undefined;

const script = [
  {
    text: ['Let me ', 'read the ', 'README ', 'first.'],
    toolCalls: [{ id: 'call_read', name: 'read_file', arguments: { path: 'README.md' } }],
    usage: { inputTokens: 1200, outputTokens: 40 },
    delayMs: 60,
  },
  {
    text: [
      'The README ',
      'describes **Rein**: ',
      'a TypeScript agent harness.\n\n',
      '```ts\nconst harness = createHarness();\n```',
    ],
    usage: { inputTokens: 1500, outputTokens: 60 },
    delayMs: 40,
  },
];

describe.skipIf(!hasChromium)('Web UI: the running example in a real browser', () => {
  const shared = browserSuite();
  let f: ServerFixture;
  afterEach(async () => {
    await f?.close();
  });

  function onlyAgent(): Agent {
    const [agent] = f.harness.agents.list();
    return agent!;
  }

  it(
    'type → streaming text → read_file approval dialog → approve → result card → summary → idle',
    async () => {
      f = await serverFixture(script, { server: { webRoot: shared.webRoot } });
      const { page, problems } = await openPage(shared.context, f.server.url);
      // The token leaves the address bar at once.
      expect(page.url()).not.toContain('token=');
      await page.getByTestId('composer-input').fill('Summarize the README');
      await page.getByTestId('composer-input').press('Enter');

      await page.locator('[data-testid="assistant-message"][data-streaming="true"]').first().waitFor();
      await page.locator('[data-testid="agent-status"][data-status="running"]').waitFor();
      const dialog = page.getByTestId('approval-dialog');
      await dialog.waitFor();
      await expect.poll(() => dialog.textContent()).toContain('read_file');
      expect(await dialog.textContent()).toContain('README.md');
      expect(await dialog.textContent()).toContain('reading needs approval');
      expect(await page.getByTestId('tool-state').first().textContent()).toBe('awaiting approval');
      // The turn stays open while the dialog waits.
      expect(onlyAgent().status).toBe('running');
      expect(onlyAgent().session.openTurn).toBe(1);
      if (screenshotDir !== undefined) {
        await mkdir(screenshotDir, { recursive: true });
        await page.screenshot({ path: join(screenshotDir, 'approval-dialog.png') });
      }

      await dialog.getByRole('button', { name: 'Allow once' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect
        .poll(() => page.getByTestId('tool-output').first().textContent())
        .toBe('contents of README.md');
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      const summary = page.getByTestId('assistant-message').last();
      expect(await summary.locator('strong').textContent()).toBe('Rein');
      expect(await summary.locator('pre code.hljs').count()).toBe(1);
      expect(await page.getByTestId('meter').textContent()).toContain('session 2700 in / 100 out');
      if (screenshotDir !== undefined)
        await page.screenshot({ path: join(screenshotDir, 'finished-turn.png') });

      await onlyAgent().whenIdle();
      expect(typesOf(onlyAgent())).toEqual(approvedToolTurnTypes);
      expect(onlyAgent().session.eventsOfType('tool/approval-decided')[0]!.data).toMatchObject({
        decision: 'allow-once',
      });
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'Stop while the approval dialog is open → aborted turn shown, agent idle, the next message works',
    async () => {
      f = await serverFixture([script[0]!, { text: 'Hello again.' }], {
        server: { webRoot: shared.webRoot },
      });
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.getByTestId('composer-input').fill('Summarize the README');
      await page.getByTestId('composer-input').press('Enter');
      const dialog = page.getByTestId('approval-dialog');
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Stop' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.locator('[data-testid="turn-end"][data-turn-end="aborted"]').waitFor();
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      expect(await page.getByTestId('tool-state').first().textContent()).toBe('failed');
      expect(await page.getByTestId('transcript').textContent()).toContain('Stopped by you');
      const agent = onlyAgent();
      await agent.whenIdle();
      expect(agent.session.eventsOfType('turn/end').map((event) => event.data.reason)).toEqual([
        { kind: 'aborted' },
      ]);
      expect(agent.session.eventsOfType('agent/cancelled').map((event) => event.data.cause)).toEqual([
        { kind: 'user' },
      ]);

      await page.getByTestId('composer-input').fill('hi');
      await page.getByTestId('composer-input').press('Enter');
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      expect(await page.getByTestId('assistant-message').last().textContent()).toContain('Hello again.');
      expect(agent.session.eventsOfType('turn/end').map((event) => event.data.reason)).toEqual([
        { kind: 'aborted' },
        { kind: 'completed' },
      ]);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    "shows the agent's todo list and the diff of an edit made by the real builtin tools",
    async () => {
      const workspace = await mkdtemp(join(tmpdir(), 'rein-ws-'));
      const home = await mkdtemp(join(tmpdir(), 'rein-home-'));
      await writeFile(join(workspace, 'notes.md'), 'alpha\nbeta\n');
      const tools = builtinTools({ workspace, reinHome: home }).filter((tool) =>
        ['edit_file', 'todo_write'].includes(tool.name),
      ) as Tool<never>[];
      f = await serverFixture(
        [
          {
            toolCalls: [
              {
                id: 'todo',
                name: 'todo_write',
                arguments: {
                  todos: [
                    { content: 'Rename beta', status: 'in_progress' },
                    { content: 'Report back', status: 'pending' },
                  ],
                },
              },
            ],
          },
          {
            toolCalls: [
              {
                id: 'edit',
                name: 'edit_file',
                arguments: { path: 'notes.md', old_string: 'beta', new_string: 'gamma' },
              },
            ],
          },
          { text: 'Renamed.' },
        ],
        { tools, server: { webRoot: shared.webRoot, cwd: workspace } },
      );
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.getByTestId('composer-input').fill('Rename beta to gamma');
      await page.getByTestId('composer-input').press('Enter');
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      const todos = page.getByTestId('todo-list');
      expect(await todos.textContent()).toContain('Rename beta');
      expect(await todos.locator('.todo-in_progress').count()).toBe(1);
      const edit = page.locator('[data-testid="tool-card"][data-call-id="edit"]');
      expect(await edit.locator('.diff .diff-add').allTextContents()).toEqual(['+gamma\n']);
      expect(await edit.locator('.diff .diff-del').allTextContents()).toEqual(['-beta\n']);
      expect(await readFile(join(workspace, 'notes.md'), 'utf8')).toBe('alpha\ngamma\n');
      expect(problems).toEqual([]);
      await rm(workspace, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    },
    browserTestTimeout,
  );

  it(
    'a provider error shows a banner with its code, and the agent stays usable',
    async () => {
      f = await serverFixture(
        [{ error: { code: 'RATE_LIMIT', message: 'slow down', status: 429 } }, { text: 'Recovered.' }],
        { server: { webRoot: shared.webRoot } },
      );
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.getByTestId('composer-input').fill('hello');
      await page.getByTestId('composer-input').press('Enter');
      const banner = page.locator('[data-testid="error-banner"][data-turn-end="error"]');
      await banner.waitFor();
      expect(await banner.textContent()).toContain('RATE_LIMIT');
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      await page.getByTestId('composer-input').fill('again');
      await page.getByTestId('composer-input').press('Enter');
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      expect(await page.getByTestId('assistant-message').last().textContent()).toContain('Recovered.');
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );
});
