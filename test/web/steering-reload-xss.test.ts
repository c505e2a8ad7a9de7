import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, AnySessionEvent, Tool, UserMessage } from '../../src/index.ts';
import { defineTool } from '../../src/index.ts';
import { startReinServer } from '../../src/server/index.ts';
import { deferred } from '../../src/testing/index.ts';
import type { ServerFixture } from '../server/support.ts';
import { readFileTool, serverFixture } from '../server/support.ts';
import { browserSuite, browserTestTimeout, hasChromium, openPage, transcriptHtml } from './support.ts';

describe.skipIf(!hasChromium)('Web UI: steering, queueing, reload, untrusted text', () => {
  const shared = browserSuite();
  let f: ServerFixture;
  afterEach(async () => {
    await f?.close();
  });

  function onlyAgent(): Agent {
    return f.harness.agents.list()[0]!;
  }

  it(
    'steering mid-turn lands in a new step; a queued message becomes its own next turn',
    async () => {
      const release = deferred<void>();
      const started = deferred<void>();
      const waitTool = defineTool<Record<string, never>>({
        name: 'run_tests',
        description: 'Runs the tests',
        parameters: { type: 'object', properties: {} },
        execute: async () => {
          started.resolve();
          await release.promise;
          return 'all tests pass';
        },
      }) as Tool<never>;
      f = await serverFixture(
        [
          { text: 'Running the tests.', toolCalls: [{ id: 'call_tests', name: 'run_tests', arguments: {} }] },
          { text: 'Tests pass; noted your steer.' },
          { text: 'Answering the queued question.' },
        ],
        { tools: [waitTool], server: { webRoot: shared.webRoot } },
      );
      const { page, problems } = await openPage(shared.context, f.server.url);
      const input = page.getByTestId('composer-input');
      await input.fill('Run the tests');
      await input.press('Enter');
      await started.promise;
      await page.locator('[data-testid="agent-status"][data-status="running"]').waitFor();
      expect(await page.getByTestId('send').textContent()).toBe('Steer now');

      await input.fill('Also check the linter');
      await input.press('Enter');
      await input.fill('Then summarize the changes');
      await page.getByTestId('queue').click();
      const queued = page.getByTestId('queued-message');
      await expect.poll(() => queued.count()).toBe(2);
      expect(await page.getByTestId('queue-panel').textContent()).toContain('next step');
      expect(await page.getByTestId('queue-panel').textContent()).toContain('next turn');

      release.resolve();
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').nth(1).waitFor();
      await page.locator('[data-testid="agent-status"][data-status="idle"]').waitFor();
      await expect.poll(() => queued.count()).toBe(0);

      const agent = onlyAgent();
      await agent.whenIdle();
      const flow = agent.session.events
        .filter((event) => ['turn/start', 'step/start', 'user/message', 'turn/end'].includes(event.type))
        .map((event) => flowLine(event));
      expect(flow).toEqual([
        'turn/start 1',
        'step/start 1.1',
        'user/message user: Run the tests',
        'step/start 1.2',
        'user/message steer: Also check the linter',
        'turn/end 1 completed',
        'turn/start 2',
        'step/start 2.1',
        'user/message user: Then summarize the changes',
        'turn/end 2 completed',
      ]);
      const labels = await page.getByTestId('user-message').locator('.who').allTextContents();
      expect(labels).toEqual(['You', 'You (steering)', 'You']);
      expect(problems).toEqual([]);
    },
    browserTestTimeout,
  );

  it(
    'send now: a parked message is removed or sent; reload mid-stream and after shows an identical transcript',
    async () => {
      const deltas = Array.from({ length: 80 }, (_, index) => `word${index} `);
      f = await serverFixture(
        [
          { error: { code: 'SERVER', message: 'upstream 500', status: 500 } },
          { text: deltas, delayMs: 50, usage: { inputTokens: 10, outputTokens: 40 } },
        ],
        { server: { webRoot: shared.webRoot } },
      );
      const { page: watcher } = await openPage(shared.context, f.server.url);
      await watcher.getByTestId('composer-input').fill('first');
      await watcher.getByTestId('composer-input').press('Enter');
      await watcher.locator('[data-testid="error-banner"][data-turn-end="error"]').waitFor();
      const agent = onlyAgent();
      await agent.whenIdle();
      // An errored turn parks what is queued: queue two while idle through the API, then act on them.
      const park = (text: string): Promise<unknown> =>
        f.api('POST', `/api/sessions/${agent.id}/messages`, { text, mode: 'inject' });
      await park('context that is not wanted');
      const wanted = agent.inbox.list('next-step')[0]!;
      expect(wanted).toBeDefined();
      await watcher.getByTestId('queued-message').first().waitFor();
      await watcher.getByTestId('queued-message').getByRole('button', { name: 'Remove' }).click();
      await expect.poll(() => watcher.getByTestId('queued-message').count()).toBe(0);
      expect(agent.inbox.size()).toBe(0);
      agent.inbox.append('next-turn', userMessage('the parked question'));
      await watcher.getByTestId('queued-message').first().waitFor();

      // A second tab on the same session (its own token from the printed URL).
      const { page: reloader } = await openPage(shared.context, f.server.url + new URL(watcher.url()).hash);
      await reloader.locator('[data-turn-end="error"]').first().waitFor();
      await watcher.getByTestId('queued-message').getByRole('button', { name: 'Send now' }).click();
      await reloader.locator('[data-testid="assistant-message"][data-streaming="true"]').waitFor();
      await expect
        .poll(async () => (await reloader.getByTestId('assistant-message').last().textContent())?.length ?? 0)
        .toBeGreaterThan(20);
      // Still streaming: the reload lands mid-turn.
      expect(agent.session.openTurn).toBe(2);
      await reloader.reload();
      await reloader.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      await watcher.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      await agent.whenIdle();
      const final = await transcriptHtml(watcher);
      expect(await transcriptHtml(reloader)).toBe(final);
      expect(final).toContain('word79');
      await reloader.reload();
      await reloader.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      expect(await transcriptHtml(reloader)).toBe(final);
      const sent = agent.session
        .eventsOfType('user/message')
        .map((event) => (event.data.content[0] as { text: string }).text);
      expect(sent).toEqual(['first', 'the parked question']);
    },
    browserTestTimeout,
  );

  it(
    'reconnects by itself when the server restarts mid-stream: no gap, no duplicate, same transcript',
    async () => {
      const deltas = Array.from({ length: 60 }, (_, index) => `part${index} `);
      f = await serverFixture([{ text: deltas, delayMs: 50 }], { server: { webRoot: shared.webRoot } });
      const { page, problems } = await openPage(shared.context, f.server.url);
      // Every stream the page opens, with the headers it was sent with.
      const streams: { url: string; authorization: string | undefined }[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.endsWith('/stream'))
          void request.allHeaders().then((headers) => {
            streams.push({ url: request.url(), authorization: headers.authorization });
          });
      });
      await page.getByTestId('composer-input').fill('stream please');
      await page.getByTestId('composer-input').press('Enter');
      await page.locator('[data-testid="assistant-message"][data-streaming="true"]').waitFor();
      const { port, token } = f.server;
      await f.server.close();
      await page.getByTestId('connection').waitFor();
      // The agent keeps going while no server is up; a new server with the same port and token comes back.
      const restarted = await startReinServer({ harness: f.harness, port, token, webRoot: shared.webRoot });
      try {
        await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
        await page.getByTestId('connection').waitFor({ state: 'detached' });
        const html = await transcriptHtml(page);
        expect(html).toContain('part59');
        expect(html.split('part30 ').length).toBe(2);
        // The first stream and the one after the restart: the token in a header, never in the URL.
        await expect.poll(() => streams.length).toBeGreaterThanOrEqual(2);
        for (const stream of streams) {
          expect(stream.url).not.toContain(token);
          expect(stream.authorization).toBe(`Bearer ${token}`);
        }
        const { page: fresh } = await openPage(shared.context, restarted.url + new URL(page.url()).hash);
        await fresh.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
        expect(await transcriptHtml(fresh)).toBe(html);
        expect(problems).toEqual([]);
      } finally {
        await restarted.close();
      }
    },
    browserTestTimeout,
  );

  it(
    'renders an XSS corpus in assistant text, tool output and file names inert',
    async () => {
      const corpus = [
        '<script>window.__pwned = "script"</script>',
        '<img src=x onerror="window.__pwned = \'img\'">',
        "[click me](javascript:window.__pwned='link')",
        '<a href="javascript:window.__pwned=\'anchor\'">anchor</a>',
        '<svg onload="window.__pwned=\'svg\'"></svg>',
        '<iframe src="javascript:window.__pwned=\'frame\'"></iframe>',
        '<form action="javascript:alert(1)"><button>go</button></form>',
      ].join('\n\n');
      const evilName = '<img src=x onerror="window.__pwned=\'name\'">.md';
      f = await serverFixture(
        [
          {
            text: corpus,
            toolCalls: [{ id: 'call_evil', name: 'read_file', arguments: { path: evilName } }],
          },
          { text: `Done reading ${evilName}` },
        ],
        {
          tools: [
            readFileTool(
              () =>
                '<script>window.__pwned="output"</script><img src=x onerror="window.__pwned=\'output-img\'">',
            ),
          ],
          server: { webRoot: shared.webRoot },
        },
      );
      const { page, problems } = await openPage(shared.context, f.server.url);
      await page.getByTestId('composer-input').fill('<img src=x onerror="window.__pwned=\'user\'">');
      await page.getByTestId('composer-input').press('Enter');
      const dialog = page.getByTestId('approval-dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('<img src=x onerror=');
      await dialog.getByRole('button', { name: 'Allow once' }).click();
      await page.locator('[data-testid="turn-end"][data-turn-end="completed"]').waitFor();
      for (const link of await page.locator('[data-testid="transcript"] a').all())
        await link.click({ force: true });

      const transcript = page.getByTestId('transcript');
      expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
      expect(
        await transcript.locator('script, iframe, form, svg, img[onerror], [onload], [onerror]').count(),
      ).toBe(0);
      expect(await transcript.locator('a[href^="javascript:" i]').count()).toBe(0);
      // The untrusted text is still there, as text.
      expect(await page.getByTestId('tool-output').first().textContent()).toContain(
        '<script>window.__pwned="output"</script>',
      );
      expect(await page.getByTestId('user-message').first().textContent()).toContain('<img src=x onerror=');
      expect(await transcript.textContent()).toContain(evilName);
      expect(problems.filter((problem) => !problem.includes('Content Security Policy'))).toEqual([]);
    },
    browserTestTimeout,
  );
});

function flowLine(event: AnySessionEvent): string {
  const data = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'turn/start':
      return `turn/start ${String(data.turn)}`;
    case 'step/start':
      return `step/start ${String(data.turn)}.${String(data.step)}`;
    case 'turn/end':
      return `turn/end ${String(data.turn)} ${(data.reason as { kind: string }).kind}`;
    default: {
      const message = data as unknown as UserMessage;
      return `user/message ${message.source.kind}: ${(message.content[0] as { text: string }).text}`;
    }
  }
}

function userMessage(text: string): UserMessage {
  return {
    id: crypto.randomUUID(),
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind: 'user' },
  };
}
