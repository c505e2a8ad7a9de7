import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import { PostgresSessionStore } from '../../src/index.ts';
import { assertEveryCallAnsweredOnce } from '../fixtures/session/crash-trial.ts';
import { describePostgres, dropSchema, freshSchemaUrl } from '../support/postgres.ts';
import type { ReinWebProcess } from '../support/rein-web-process.ts';
import { startReinWeb, waitUntil } from '../support/rein-web-process.ts';
import { hasChromium, launchBrowser, openPage } from '../web/support.ts';

const leaseMs = 1500;
const binPath = join(import.meta.dirname, '../../bin/rein.js');

function turnOf(event: AnySessionEvent): number | undefined {
  const turn = (event.data as { turn?: unknown } | null)?.turn;
  return typeof turn === 'number' ? turn : undefined;
}

function turnEnd(events: readonly AnySessionEvent[], turn: number): AnySessionEvent | undefined {
  return events.find((event) => event.type === 'turn/end' && turnOf(event) === turn);
}

describePostgres('two rein web servers on one PostgreSQL database', (url) => {
  let directory: string;
  let workspace: string;
  let fresh: { url: string; schema: string };
  let store: PostgresSessionStore;
  const servers: ReinWebProcess[] = [];
  const seeded = new Set<string>();

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'rein-pg-servers-'));
    workspace = join(directory, 'workspace');
    await mkdir(workspace);
    await writeFile(
      join(workspace, 'README.md'),
      '# Shared project\n\n## Install\n\nnpm ci\n\n## Use\n\nRun it.\n\n## Test\n\nnpm test\n',
    );
    fresh = freshSchemaUrl(url);
    fresh.url = `${fresh.url}&lease_ms=${leaseMs}`;
    store = await PostgresSessionStore.connect({ url: fresh.url });
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await store?.close();
    if (fresh !== undefined) await dropSchema(url, fresh.schema);
    await rm(directory, { recursive: true, force: true });
  });

  async function start(name: string, delayMs: number): Promise<ReinWebProcess> {
    const server = await startReinWeb({
      store: fresh.url,
      home: join(directory, `home-${name}`),
      cwd: workspace,
      env: { REIN_DEMO_DELAY_MS: String(delayMs) },
    });
    servers.push(server);
    return server;
  }

  /** Runs one demo turn with `rein run` on the database (as a user would) and returns the session id. */
  async function seedSession(): Promise<string> {
    const run = spawnSync(
      process.execPath,
      [binPath, 'run', '--store', fresh.url, '--approve', 'yolo', 'Summarize the README'],
      {
        cwd: workspace,
        env: { ...process.env, REIN_HOME: join(directory, 'home-cli'), REIN_DEMO_DELAY_MS: '0' },
        encoding: 'utf8',
      },
    );
    expect(run.status, run.stderr).toBe(0);
    const rows = (await store.list()).filter((row) => !seeded.has(row.id));
    expect(rows).toHaveLength(1);
    seeded.add(rows[0]!.id);
    return rows[0]!.id;
  }

  it('exactly one server wins a race to continue a session; a paused holder is fenced after a takeover', async () => {
    const id = await seedSession();
    // The seeded turn has tool results of its own: only one after them belongs to the new turn.
    const seededLength = (await store.read(id)).events.length;
    const [a, b] = [await start('a', 120), await start('b', 120)];
    const answers = await Promise.all(
      [a, b].map((server) =>
        server.api('POST', `/api/sessions/${id}/messages`, { text: 'Summarize the README' }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
    expect(answers.find((answer) => answer.status === 409)!.json).toMatchObject({
      error: { code: 'SESSION_LOCKED' },
    });
    const winner = answers[0]!.status === 202 ? a : b;
    const loser = winner === a ? b : a;

    // Pause the holder mid-turn, once its tool ran, and wait past its lease.
    await waitUntil('the tool result in the database', async () =>
      (await store.read(id)).events.slice(seededLength).some((event) => event.type === 'tool/result')
        ? true
        : undefined,
    );
    winner.process.kill('SIGSTOP');
    await new Promise((done) => setTimeout(done, leaseMs + 1500));
    const frozen = (await store.read(id)).events;
    const pausedTurn = frozen.findLast((event) => event.type === 'turn/start')!;
    expect(turnEnd(frozen, turnOf(pausedTurn)!)).toBeUndefined();

    // The other server takes the session over, repairs the open turn and runs its own to the end.
    const takeover = await loser.api('POST', `/api/sessions/${id}/messages`, { text: 'Summarize it again' });
    expect(takeover.status).toBe(202);
    const ownTurn = turnOf(pausedTurn)! + 1;
    const afterTakeover = await waitUntil("the new holder's turn end", async () => {
      const events = (await store.read(id)).events;
      return turnEnd(events, ownTurn) !== undefined ? events : undefined;
    });
    expect(turnEnd(afterTakeover, ownTurn)!.data).toEqual({ turn: ownTurn, reason: { kind: 'completed' } });

    // The paused server wakes up: its next append is refused by the fence and its turn fails typed.
    winner.process.kill('SIGCONT');
    const failed = await waitUntil('the fenced turn end on the paused server', async () => {
      const { json } = await winner.api('GET', `/api/sessions/${id}/events?from=0`);
      const events = (json as { events: AnySessionEvent[] }).events;
      return turnEnd(events, turnOf(pausedTurn)!);
    });
    expect(failed.data).toMatchObject({
      reason: { kind: 'error', error: { code: 'CHECKPOINT_FAILED' } },
    });
    expect(JSON.stringify(failed.data)).toContain('was taken over');
    await new Promise((done) => setTimeout(done, 1000));

    const final = (await store.read(id)).events;
    // Nothing was rewritten, and after the takeover only the new holder wrote: the repair records of
    // the paused turn, its end-seed, then its own turn, nothing of the fenced server in between.
    expect(final.slice(0, frozen.length)).toEqual(frozen);
    expect(final).toEqual(afterTakeover);
    const added = final.slice(frozen.length);
    const endSeed = added.findIndex((event) => event.type === 'session/end-seed');
    expect(endSeed).toBeGreaterThan(0);
    expect(added.slice(0, endSeed).every((event) => turnOf(event) === turnOf(pausedTurn))).toBe(true);
    expect(added[endSeed - 1]!.data).toEqual({ turn: turnOf(pausedTurn), reason: { kind: 'interrupted' } });
    expect(
      added.slice(endSeed + 1).every((event) => turnOf(event) === undefined || turnOf(event) === ownTurn),
    ).toBe(true);
    assertEveryCallAnsweredOnce(final);

    // With both servers gone, the log opens under the session rules and continues.
    await Promise.all([a.stop(), b.stop()]);
    const reopened = await waitUntil('the lease to be free', () =>
      store.open(id).catch((error: { code?: string }) => {
        if (error.code === 'SESSION_LOCKED') return undefined;
        throw error;
      }),
    );
    expect(reopened.openTurn).toBeUndefined();
    await store.release(reopened);
  }, 120_000);

  it.skipIf(!hasChromium)(
    'a browser on server A follows a turn that server B runs, to its end, each event once',
    async () => {
      const id = await seedSession();
      const [a, b] = [await start('c', 0), await start('d', 60)];
      const browser = await launchBrowser();
      try {
        const { page, problems } = await openPage(browser, `${a.url}#/s/${id}`);
        const stored = (await store.read(id)).events;
        const count = (events: readonly AnySessionEvent[], type: string): number =>
          events.filter((event) => event.type === type).length;
        await expect
          .poll(() => page.getByTestId('assistant-message').count(), { timeout: 30_000 })
          .toBe(count(stored, 'assistant/message'));

        const sent = await b.api('POST', `/api/sessions/${id}/messages`, { text: 'Summarize it again' });
        expect(sent.status).toBe(202);
        // Server A shows the turn while server B still runs it.
        await page.getByTestId('user-message').filter({ hasText: 'Summarize it again' }).waitFor();
        const midTurn = (await store.read(id)).events;
        expect(turnEnd(midTurn, 2)).toBeUndefined();

        const final = await waitUntil('the turn on server B to end', async () => {
          const events = (await store.read(id)).events;
          return turnEnd(events, 2) !== undefined ? events : undefined;
        });
        expect(turnEnd(final, 2)!.data).toEqual({ turn: 2, reason: { kind: 'completed' } });
        const lastAnswer = final.findLast((event) => event.type === 'assistant/message')!;
        const lastText = (
          lastAnswer.data as { message: { content: Array<{ type: string; text?: string }> } }
        ).message.content
          .filter((block) => block.type === 'text')
          .map((block) => block.text)
          .join('');
        const firstLine = lastText
          .split('\n')
          .find((line) => line.trim() !== '')!
          .replace(/[*`_]/g, '')
          .trim();
        await page
          .getByTestId('assistant-message')
          .last()
          .filter({ hasText: firstLine.slice(0, 30) })
          .waitFor();
        // Every event arrived once: as many messages, tool cards and turn ends as the log holds. The
        // turn's last events reach server A through a notification that may still be in flight when
        // the answer is painted, so each count is polled; a duplicate would overshoot and never settle.
        const shown = async (): Promise<Record<string, number>> => ({
          assistant: await page.getByTestId('assistant-message').count(),
          user: await page.getByTestId('user-message').count(),
          tools: await page.getByTestId('tool-card').count(),
          turnEnds: await page.getByTestId('turn-end').count(),
        });
        await expect.poll(shown, { timeout: 30_000 }).toEqual({
          assistant: count(final, 'assistant/message'),
          user: count(final, 'user/message'),
          tools: count(final, 'tool/call'),
          turnEnds: count(final, 'turn/end'),
        });
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
        await Promise.all([a.stop(), b.stop()]);
      }
    },
    120_000,
  );
});
