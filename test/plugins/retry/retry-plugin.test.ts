import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Harness, HarnessPlugin } from '../../../src/index.ts';
import { OpenAICompatibleProvider, createHarness, retryPlugin } from '../../../src/index.ts';
import { backoffDelay, retriesInChain } from '../../../src/plugins/retry/index.ts';
import type { FakeReply, FakeServer } from '../../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../../support/fake-openai-server.ts';
import { dataOf } from '../../core/support.ts';

interface Rig {
  server: FakeServer;
  harness: Harness;
  agent: Agent;
}

let rig: Rig | undefined;

afterEach(async () => {
  await rig?.harness.dispose();
  await rig?.server.close();
  rig = undefined;
});

async function start(
  replies: FakeReply[],
  plugin: HarnessPlugin = retryPlugin({ initialDelayMs: 5, maxDelayMs: 2_000 }),
): Promise<Rig> {
  const server = await startFakeOpenAIServer(replies);
  const harness = createHarness({
    providers: [
      new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl: server.url, apiKey: 'sk-test' }),
    ],
    plugins: [plugin],
  });
  const agent = await harness.createAgent({ provider: 'deepseek', model: 'deepseek-chat' });
  rig = { server, harness, agent };
  return rig;
}

/** The log's event types, without the chunk and request-envelope noise. */
function outline(agent: Agent): string[] {
  const noise = new Set(['assistant/chunk', 'request/header', 'request/context']);
  return agent.session.events.filter((event) => !noise.has(event.type)).map((event) => event.type);
}

const failed = ['step/start', 'request/failed', 'step/end', 'llm/retry'];

describe('retry plugin through a real agent and the real HTTP adapter', () => {
  it('429 with Retry-After: 1 waits the provider delay, then succeeds', async () => {
    const { agent, server } = await start([
      { status: 429, headers: { 'retry-after': '1' }, error: { message: 'Rate limit reached' } },
      { text: 'hello' },
    ]);
    agent.followup('hi');
    await agent.whenIdle();
    expect(outline(agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/failed',
      'step/end',
      'llm/retry',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const [retry] = dataOf<Record<string, unknown>>(agent, 'llm/retry');
    expect(retry).toEqual({
      turn: 1,
      step: 1,
      attempt: 1,
      delayMs: 1000,
      failure: {
        code: 'RATE_LIMIT',
        status: 429,
        providerRetryAfterMs: 1000,
        message: 'deepseek: Rate limit reached (the provider asks to wait 1 s before retrying)',
      },
      provider: 'deepseek',
      model: 'deepseek-chat',
    });
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    expect(server.requests).toHaveLength(2);
  });

  it('500 three times then success: three llm/retry records and a completed turn', async () => {
    const { agent, server } = await start([
      { status: 500, error: { message: 'boom 1' } },
      { status: 500, error: { message: 'boom 2' } },
      { status: 500, error: { message: 'boom 3' } },
      { text: 'finally' },
    ]);
    agent.followup('hi');
    await agent.whenIdle();
    expect(outline(agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/failed',
      'step/end',
      'llm/retry',
      ...failed,
      ...failed,
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ]);
    const retries = dataOf<{ attempt: number; step: number; delayMs: number; failure: { code: string } }>(
      agent,
      'llm/retry',
    );
    expect(retries.map((retry) => [retry.step, retry.attempt, retry.failure.code])).toEqual([
      [1, 1, 'SERVER'],
      [2, 2, 'SERVER'],
      [3, 3, 'SERVER'],
    ]);
    for (const retry of retries) expect(retry.delayMs).toBeLessThanOrEqual(2_000);
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    expect(server.requests).toHaveLength(4);
  });

  it('401 is never retried: the turn ends with AUTH', async () => {
    const { agent, server } = await start([
      { status: 401, error: { type: 'authentication_error', message: 'bad key' } },
    ]);
    agent.followup('hi');
    await agent.whenIdle();
    expect(outline(agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/failed',
      'step/end',
      'turn/end',
    ]);
    expect(dataOf(agent, 'turn/end')).toEqual([
      {
        turn: 1,
        reason: { kind: 'error', error: { code: 'AUTH', status: 401, message: 'deepseek: bad key' } },
      },
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('six 503s: the failure stands after five retries', async () => {
    const replies = Array.from({ length: 6 }, (_, index) => ({
      status: 503,
      error: { message: `busy ${index + 1}` },
    }));
    const { agent, server } = await start(replies);
    agent.followup('hi');
    await agent.whenIdle();
    expect(dataOf<{ attempt: number }>(agent, 'llm/retry').map((retry) => retry.attempt)).toEqual([
      1, 2, 3, 4, 5,
    ]);
    expect(dataOf(agent, 'request/failed')).toHaveLength(6);
    expect(dataOf(agent, 'turn/end')).toEqual([
      {
        turn: 1,
        reason: { kind: 'error', error: { code: 'SERVER', status: 503, message: 'deepseek: busy 6' } },
      },
    ]);
    expect(outline(agent).slice(-3)).toEqual(['request/failed', 'step/end', 'turn/end']);
    expect(server.requests).toHaveLength(6);
    // The agent stays usable: the next prompt runs a fresh turn.
    server.push({ text: 'back' });
    agent.followup('again');
    await agent.whenIdle();
    expect(dataOf(agent, 'turn/end').at(-1)).toEqual({ turn: 2, reason: { kind: 'completed' } });
  });

  it('Stop during a backoff wait aborts at once', async () => {
    const { agent, server } = await start(
      [{ status: 503, error: { message: 'busy' } }],
      retryPlugin({ initialDelayMs: 600_000, maxDelayMs: 600_000, jitterRatio: 0 }),
    );
    const waiting = new Promise<void>((resolve) => {
      rig!.harness.hooks.on('session/event', ({ event }) => {
        if (event.type === 'llm/retry') resolve();
      });
    });
    agent.followup('hi');
    await waiting;
    agent.cancel({ kind: 'user' });
    await agent.whenIdle();
    expect(outline(agent).slice(-5)).toEqual([
      'request/failed',
      'step/end',
      'llm/retry',
      'agent/cancelled',
      'turn/end',
    ]);
    expect(dataOf(agent, 'llm/retry')[0]).toMatchObject({ attempt: 1, delayMs: 600_000 });
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(server.requests).toHaveLength(1);
  });

  it('a successful response resets the budget of the failure chain', async () => {
    const { agent } = await start(
      [
        { status: 500, error: { message: 'a' } },
        { toolCalls: [{ id: 'call_1', name: 'missing_tool', arguments: '{}' }] },
        { status: 500, error: { message: 'b' } },
        { text: 'done' },
      ],
      retryPlugin({ maxRetries: 1, initialDelayMs: 1, maxDelayMs: 10 }),
    );
    agent.followup('hi');
    await agent.whenIdle();
    expect(dataOf<{ attempt: number }>(agent, 'llm/retry').map((retry) => retry.attempt)).toEqual([1, 1]);
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('a Retry-After longer than the backoff cap but within maxRetryAfterMs is waited exactly', async () => {
    const { agent, server } = await start(
      [{ status: 429, headers: { 'retry-after-ms': '300' }, error: { message: 'busy' } }, { text: 'hello' }],
      retryPlugin({ initialDelayMs: 5, maxDelayMs: 50 }),
    );
    agent.followup('hi');
    await agent.whenIdle();
    expect(dataOf<{ delayMs: number; attempt: number }>(agent, 'llm/retry')).toMatchObject([
      { attempt: 1, delayMs: 300, failure: { code: 'RATE_LIMIT', providerRetryAfterMs: 300 } },
    ]);
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    expect(server.requests).toHaveLength(2);
  });

  it('past maxRetryAfterMs the failure stands, and its message says how long to wait', async () => {
    const { agent, server } = await start(
      [{ status: 429, headers: { 'retry-after': '90' }, error: { message: 'Rate limit reached' } }],
      retryPlugin({ maxRetryAfterMs: 60_000 }),
    );
    agent.followup('hi');
    await agent.whenIdle();
    expect(dataOf(agent, 'llm/retry')).toEqual([]);
    expect(dataOf(agent, 'turn/end')).toEqual([
      {
        turn: 1,
        reason: {
          kind: 'error',
          error: {
            code: 'RATE_LIMIT',
            status: 429,
            providerRetryAfterMs: 90_000,
            message: 'deepseek: Rate limit reached (the provider asks to wait 1 min 30 s before retrying)',
          },
        },
      },
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('leaves CONTEXT_WINDOW_EXCEEDED, and a Retry-After above the limit, to others', async () => {
    const { agent, server } = await start([
      { status: 400, error: { message: "This model's maximum context length is 128000 tokens" } },
      { status: 429, headers: { 'retry-after': '61' }, error: { message: 'later' } },
    ]);
    agent.followup('one');
    await agent.whenIdle();
    agent.followup('two');
    await agent.whenIdle();
    expect(dataOf(agent, 'llm/retry')).toEqual([]);
    expect(
      dataOf<{ reason: { error: { code: string } } }>(agent, 'turn/end').map((end) => end.reason.error.code),
    ).toEqual(['CONTEXT_WINDOW_EXCEEDED', 'RATE_LIMIT']);
    expect(server.requests).toHaveLength(2);
  });
});

describe('retry policy arithmetic', () => {
  it('doubles from the initial delay up to the cap, with bounded jitter', () => {
    const policy = { initialDelayMs: 500, maxDelayMs: 10_000, jitterRatio: 0.1 };
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => backoffDelay(attempt, policy, () => 0.5))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
    expect(backoffDelay(1, policy, () => 0)).toBe(450);
    expect(backoffDelay(1, policy, () => 0.999_999)).toBe(550);
    expect(backoffDelay(6, policy, () => 0.999_999)).toBe(10_000);
  });

  it('rejects nonsense options with a typed error', () => {
    expect(() => retryPlugin({ maxRetries: -1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => retryPlugin({ jitterRatio: 2 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });

  it('counts only this turn and route since the last complete response', () => {
    const retry = (turn: number, provider: string) => ({
      type: 'llm/retry',
      seq: 0,
      time: 0,
      data: {
        turn,
        step: 1,
        attempt: 1,
        delayMs: 1,
        failure: { code: 'SERVER', message: 'x' },
        provider,
        model: 'm',
      },
    });
    const events = [
      { type: 'turn/start', seq: 0, time: 0, data: { turn: 2 } },
      retry(2, 'a'),
      { type: 'assistant/message', seq: 0, time: 0, data: { turn: 2 } },
      retry(2, 'a'),
      retry(2, 'b'),
      retry(2, 'a'),
    ];
    expect(retriesInChain(events, 2, 'a', 'm')).toBe(2);
    expect(retriesInChain(events, 2, 'b', 'm')).toBe(1);
  });
});
