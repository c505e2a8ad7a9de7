import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { PostgresSessionStore, createHarness, defineTool } from '../../src/index.ts';
import { ScriptedProvider, eventTypes } from '../../src/testing/index.ts';
import { assertEveryCallAnsweredOnce } from '../fixtures/session/crash-trial.ts';
import { describePostgres } from '../support/postgres.ts';

const run = promisify(execFile);
const script = resolve(import.meta.dirname, '../../scripts/postgres-test-server.sh');

// This file restarts its database, so it runs its own server rather than the one other files share.
describePostgres('PostgreSQL restarted or stopped mid-turn', () => {
  let directory: string;
  let url: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'rein-pg-restart-'));
    // Beside the temporary directory, not in it: the server's unprivileged user must reach its files.
    env = { ...process.env, REIN_TEST_POSTGRES_DIR: `${directory}-server` };
    const { stdout } = await run(script, ['start'], { env });
    url = /REIN_TEST_POSTGRES_URL=(\S+)/.exec(stdout)![1]!;
  }, 120_000);

  afterAll(async () => {
    if (env !== undefined) await run(script, ['stop'], { env });
    await rm(directory, { recursive: true, force: true });
  }, 60_000);

  function databaseTool(name: string, action: () => Promise<unknown>): Tool<never> {
    return defineTool<Record<string, never>>({
      name,
      description: `Does ${name} to the database`,
      effect: 'write',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      execute: async () => {
        await action();
        return 'done';
      },
    }) as Tool<never>;
  }

  it('a restart while the answer streams: the checkpoint is retried, nothing lost or duplicated', async () => {
    const store = await PostgresSessionStore.connect({ url: `${url}?schema=restart`, batchWindowMs: 20 });
    let restarted: Promise<unknown> | undefined;
    const model = new ScriptedProvider({
      responses: [
        {
          text: ['Restarting ', 'the database.'],
          toolCalls: [{ id: 'call_r', name: 'restart_database', arguments: {} }],
        },
        { text: Array.from({ length: 30 }, (_, index) => `chunk ${index} `), delayMs: 60 },
        { text: ['Still ', 'here.'] },
      ],
    });
    const tool = databaseTool('restart_database', async () => {
      // The restart goes on while the next step streams: background commits and the turn end meet it.
      restarted = run(script, ['restart'], { env });
    });
    const harness = createHarness({ providers: [model], tools: [tool], store });
    const agent = await harness.createAgent({ id: 'restarted', provider: 'scripted', model: 'test-model' });
    agent.followup('restart it');
    await agent.whenIdle();
    await restarted;
    const session = agent.session;
    expect(session.eventsOfType('turn/end').at(-1)!.data).toEqual({ turn: 1, reason: { kind: 'completed' } });
    await harness.dispose();
    const stored = (await store.read('restarted')).events;
    expect(stored).toEqual(JSON.parse(JSON.stringify(session.events)));
    assertEveryCallAnsweredOnce(stored);
    await store.close();

    // Another process (a fresh store) resumes the session and continues it.
    const next = await PostgresSessionStore.connect({ url: `${url}?schema=restart` });
    const again = createHarness({ providers: [model], tools: [tool], store: next });
    const resumed = await again.resumeAgent('restarted', { provider: 'scripted', model: 'test-model' });
    expect(eventTypes(resumed.session.events.slice(stored.length))).toEqual(['session/end-seed']);
    resumed.followup('are you there?');
    await resumed.whenIdle();
    expect(resumed.session.eventsOfType('turn/end').at(-1)!.data).toEqual({
      turn: 2,
      reason: { kind: 'completed' },
    });
    await again.dispose();
    expect((await next.read('restarted')).events).toHaveLength(resumed.session.length);
    await next.close();
  }, 120_000);

  it('a database gone past the retry window: the turn fails typed, and resumes once it is back', async () => {
    const store = await PostgresSessionStore.connect({
      url: `${url}?schema=halted`,
      retryMs: 1000,
      leaseMs: 1500,
    });
    const model = new ScriptedProvider({
      responses: [
        {
          text: ['Stopping ', 'the database.'],
          toolCalls: [{ id: 'call_h', name: 'halt_database', arguments: {} }],
        },
        // Slower than the request's commit takes to fail (the batch window, then the retry window).
        { text: ['never ', 'used'], delayMs: 500 },
        { text: ['Back ', 'again.'] },
      ],
    });
    const tool = databaseTool('halt_database', () => run(script, ['halt'], { env }));
    const harness = createHarness({ providers: [model], tools: [tool], store });
    const agent = await harness.createAgent({ id: 'halted', provider: 'scripted', model: 'test-model' });
    agent.followup('stop it');
    await agent.whenIdle();
    const session = agent.session;
    const turnEnd = session.eventsOfType('turn/end').at(-1)!;
    expect(turnEnd.data).toMatchObject({
      turn: 1,
      reason: { kind: 'error', error: { code: 'CHECKPOINT_FAILED' } },
    });
    expect(JSON.stringify(turnEnd.data)).toContain('cannot reach postgres://');
    // The request went out while its commit was retried; the commit's failure ended the turn before
    // the answer was used (no assistant message).
    expect(model.requests).toHaveLength(2);
    expect(session.eventsOfType('assistant/message')).toHaveLength(1);
    // What the tool's checkpoint made durable before it ran is everything acknowledged.
    const acknowledged = session.events.slice(
      0,
      session.events.findIndex((event) => event.type === 'tool/result'),
    );
    await harness.dispose().catch(() => {
      // Releasing cannot reach the database either; the lease expires on its own.
    });
    await store.close();

    await run(script, ['revive'], { env });
    const next = await PostgresSessionStore.connect({ url: `${url}?schema=halted`, leaseMs: 30_000 });
    const stored = (await next.read('halted')).events;
    expect(stored).toEqual(JSON.parse(JSON.stringify(acknowledged)));
    const again = createHarness({ providers: [model], tools: [tool], store: next });
    // The stopped server's lease is still valid (it was never released): wait for it like a new server would.
    let resumed;
    for (let attempt = 0; ; attempt++) {
      try {
        resumed = await again.resumeAgent('halted', { provider: 'scripted', model: 'test-model' });
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== 'SESSION_LOCKED' || attempt > 400) throw error;
        await new Promise((done) => setTimeout(done, 100));
      }
    }
    expect(eventTypes(resumed.session.events.slice(stored.length))).toEqual([
      'tool/result',
      'step/end',
      'turn/end',
      'session/end-seed',
    ]);
    assertEveryCallAnsweredOnce(resumed.session.events);
    resumed.followup('are you back?');
    await resumed.whenIdle();
    expect(resumed.session.eventsOfType('turn/end').at(-1)!.data).toEqual({
      turn: 2,
      reason: { kind: 'completed' },
    });
    await again.dispose();
    await next.close();
  }, 120_000);
});
