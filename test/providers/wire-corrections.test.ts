import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Harness, LlmAdapter, StreamChunk } from '../../src/index.ts';
import { AnthropicProvider, OpenAICompatibleProvider, createHarness, retryPlugin } from '../../src/index.ts';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.ts';
import type { FakeReply, FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { dataOf } from '../core/support.ts';

let server: FakeServer | undefined;
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.dispose();
  await server?.close();
  harness = undefined;
  server = undefined;
});

const openai = (
  url: string,
  options: Partial<ConstructorParameters<typeof OpenAICompatibleProvider>[0]> = {},
) => new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl: url, apiKey: 'k', ...options });
const anthropic = (url: string) => new AnthropicProvider({ baseUrl: url, apiKey: 'k' });

async function agentOver(
  adapter: (url: string) => LlmAdapter,
  start: (replies: FakeReply[]) => Promise<FakeServer>,
  replies: FakeReply[],
  model: string,
  options: { retry?: boolean; maxTokens?: number; reasoningEffort?: string } = {},
): Promise<Agent> {
  server = await start(replies);
  const provider = adapter(server.url);
  harness = createHarness({
    providers: [provider],
    plugins: options.retry === true ? [retryPlugin({ initialDelayMs: 1, maxDelayMs: 5 })] : [],
  });
  return harness.createAgent({
    provider: provider.provider,
    model,
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.reasoningEffort !== undefined ? { reasoningEffort: options.reasoningEffort } : {}),
  });
}

async function turnError(agent: Agent): Promise<unknown> {
  agent.followup('go');
  await agent.whenIdle();
  const [end] = dataOf<{ reason: { kind: string; error?: unknown } }>(agent, 'turn/end');
  return end!.reason;
}

const sse = (...frames: string[]) => frames.join('');
const chunk = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const textChunk = (text: string, finish: string | null = null) =>
  chunk({ choices: [{ index: 0, delta: { content: text }, finish_reason: finish }] });

describe('every failure gets a canonical code', () => {
  it('an HTTP 3xx the client could not follow is INVALID_RESPONSE naming the redirect, never HTTP_302', async () => {
    const agent = await agentOver(openai, startFakeOpenAIServer, [{ status: 302, raw: '' }], 'deepseek-chat');
    expect(await turnError(agent)).toEqual({
      kind: 'error',
      error: {
        code: 'INVALID_RESPONSE',
        status: 302,
        message:
          'deepseek: the endpoint answered HTTP 302 and the redirect was not followed; check the base URL',
      },
    });
  });

  for (const [label, body, detail] of [
    ['{"choices":[null]}', chunk({ choices: [null] }), 'a choice is not an object'],
    [
      '{"tool_calls":[null]}',
      chunk({ choices: [{ index: 0, delta: { tool_calls: [null] } }] }),
      'a tool call delta is not an object',
    ],
    [
      'tool_calls: "bad"',
      chunk({ choices: [{ index: 0, delta: { tool_calls: 'bad' } }] }),
      '`tool_calls` is not an array',
    ],
  ] as const) {
    it(`a chunk like ${label} is INVALID_RESPONSE, not a TypeError or phantom calls`, async () => {
      const agent = await agentOver(
        openai,
        startFakeOpenAIServer,
        [{ raw: sse(textChunk('hi'), body, textChunk('', 'stop'), 'data: [DONE]\n\n') }],
        'deepseek-chat',
      );
      expect(await turnError(agent)).toEqual({
        kind: 'error',
        error: { code: 'INVALID_RESPONSE', message: `deepseek: malformed stream: ${detail}` },
      });
      expect(dataOf(agent, 'tool/call')).toEqual([]);
    });
  }

  it("Anthropic's 429 enforced_spend_limit_reached is QUOTA and is not retried", async () => {
    const body = JSON.stringify({
      type: 'error',
      error: {
        type: 'rate_limit_error',
        message: 'You have reached your specified API usage limits.',
        details: { error_code: 'enforced_spend_limit_reached' },
      },
    });
    const agent = await agentOver(
      anthropic,
      startFakeAnthropicServer,
      [{ status: 429, raw: body }, { text: 'never asked' }],
      'claude-sonnet-4-5',
      { retry: true },
    );
    expect(await turnError(agent)).toEqual({
      kind: 'error',
      error: {
        code: 'QUOTA',
        status: 429,
        message: 'anthropic: You have reached your specified API usage limits.',
      },
    });
    expect(server!.requests).toHaveLength(1);
    expect(dataOf(agent, 'llm/retry')).toEqual([]);
  });
});

describe('server-sent events per the WHATWG rules', () => {
  const body = (separator: string, extra: string) =>
    [
      extra,
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hello' }, finish_reason: null }] })}`,
      '',
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}`,
      '',
      'data: [DONE]',
      '',
      '',
    ].join(separator);

  for (const [label, raw] of [
    ['an unknown field line (x-vendor: 1)', body('\n', 'x-vendor: 1')],
    ['retry: soon', body('\n', 'retry: soon')],
    ['a field with no colon', body('\n', 'heartbeat')],
    ['a bare data line (an empty data field)', body('\n', 'event: ping\ndata\n')],
    ['CR-only line endings', body('\r', ': comment')],
    ['CRLF line endings', body('\r\n', 'id: 7')],
  ] as const) {
    it(`accepts ${label}`, async () => {
      const agent = await agentOver(openai, startFakeOpenAIServer, [{ raw }], 'deepseek-chat');
      agent.followup('go');
      await agent.whenIdle();
      expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
      expect(
        dataOf<{ message: { content: unknown[] } }>(agent, 'assistant/message').map((m) => m.message.content),
      ).toEqual([[{ type: 'text', text: 'hello' }]]);
    });
  }

  it('a body that is not an event stream is INVALID_RESPONSE', async () => {
    const agent = await agentOver(
      openai,
      startFakeOpenAIServer,
      [{ raw: '<html>gateway says hi</html>\n' }],
      'deepseek-chat',
    );
    expect(await turnError(agent)).toEqual({
      kind: 'error',
      error: {
        code: 'INVALID_RESPONSE',
        message: 'deepseek: the response is not an event stream: <html>gateway says hi</html>',
      },
    });
  });

  it('an event whose JSON is broken is INVALID_RESPONSE', async () => {
    const agent = await agentOver(
      openai,
      startFakeOpenAIServer,
      [{ raw: sse(textChunk('hi'), 'data: {"choices": [\n\n') }],
      'deepseek-chat',
    );
    expect(await turnError(agent)).toEqual({
      kind: 'error',
      error: {
        code: 'INVALID_RESPONSE',
        message: 'deepseek: malformed stream: an event is not JSON: {"choices": [',
      },
    });
  });
});

describe('the output limit is sent', () => {
  it('DeepSeek gets max_tokens from the catalog; OpenAI gets max_completion_tokens from the call', async () => {
    const agent = await agentOver(openai, startFakeOpenAIServer, [{ text: 'ok' }], 'deepseek-chat');
    agent.followup('go');
    await agent.whenIdle();
    expect(server!.requests[0]!.body).toMatchObject({ model: 'deepseek-chat', max_tokens: 8192 });
    await harness!.dispose();
    await server!.close();
    const second = await agentOver(
      (url) =>
        openai(url, { provider: 'openai', maxTokensField: 'max_completion_tokens', reasoningReplay: false }),
      startFakeOpenAIServer,
      [{ text: 'ok' }],
      'gpt-5',
      { maxTokens: 20_000 },
    );
    second.followup('go');
    await second.whenIdle();
    const sent = server!.requests[0]!.body as Record<string, unknown>;
    expect(sent.max_completion_tokens).toBe(20_000);
    expect(sent).not.toHaveProperty('max_tokens');
  });
});

describe('usage that adds up', () => {
  it('xAI-style reasoning tokens reported beside completion tokens are added to the output', async () => {
    const agent = await agentOver(
      openai,
      startFakeOpenAIServer,
      [
        {
          text: 'ok',
          usage: {
            prompt_tokens: 100,
            completion_tokens: 20,
            total_tokens: 150,
            completion_tokens_details: { reasoning_tokens: 30 },
          },
        },
        {
          text: 'ok',
          usage: {
            prompt_tokens: 100,
            completion_tokens: 50,
            total_tokens: 150,
            completion_tokens_details: { reasoning_tokens: 30 },
          },
        },
      ],
      'deepseek-chat',
    );
    agent.followup('beside');
    await agent.whenIdle();
    agent.followup('included');
    await agent.whenIdle();
    expect(dataOf<{ usage: unknown }>(agent, 'assistant/message').map((m) => m.usage)).toEqual([
      { inputTokens: 100, outputTokens: 50, reasoningTokens: 30 },
      { inputTokens: 100, outputTokens: 50, reasoningTokens: 30 },
    ]);
  });

  it('an Anthropic refusal keeps its usage and stop_details on request/failed', async () => {
    const event = (type: string, data: unknown) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`;
    const raw = sse(
      event('message_start', {
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          content: [],
          usage: { input_tokens: 40, output_tokens: 1 },
        },
      }),
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'I cannot' } }),
      event('content_block_stop', { index: 0 }),
      event('message_delta', {
        delta: {
          stop_reason: 'refusal',
          stop_details: { type: 'refusal', category: 'cyber', explanation: 'policy violation' },
        },
        usage: { output_tokens: 12 },
      }),
      event('message_stop', {}),
    );
    const agent = await agentOver(anthropic, startFakeAnthropicServer, [{ raw }], 'claude-sonnet-4-5');
    agent.followup('go');
    await agent.whenIdle();
    expect(dataOf(agent, 'request/failed')).toEqual([
      {
        turn: 1,
        step: 1,
        failure: {
          code: 'CONTENT_FILTER',
          message: 'anthropic: the model refused to answer: policy violation',
          details: { type: 'refusal', category: 'cyber', explanation: 'policy violation' },
        },
        usage: { inputTokens: 40, outputTokens: 12 },
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
      },
    ]);
  });
});

describe('reasoning controls reach the wire', () => {
  it('an Anthropic request with a thinking budget carries thinking', async () => {
    const agent = await agentOver(
      anthropic,
      startFakeAnthropicServer,
      [{ text: 'ok' }],
      'claude-sonnet-4-5',
      {
        reasoningEffort: '4096',
      },
    );
    agent.followup('go');
    await agent.whenIdle();
    expect(server!.requests[0]!.body).toMatchObject({
      max_tokens: 64_000,
      thinking: { type: 'enabled', budget_tokens: 4096 },
    });
  });
});

export type { StreamChunk };
