import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/index.ts';
import { OpenAICompatibleProvider, createUserMessage } from '../../src/index.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { adapterConformance } from './adapter-conformance.ts';

adapterConformance({
  name: 'OpenAI-compatible (DeepSeek)',
  provider: 'deepseek',
  model: 'deepseek-reasoner',
  path: '/v1/chat/completions',
  startServer: startFakeOpenAIServer,
  createAdapter: (baseUrl, options) =>
    new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl, apiKey: 'sk-test', ...options }),
  usage: {
    wire: {
      prompt_tokens: 120,
      completion_tokens: 30,
      total_tokens: 150,
      prompt_cache_hit_tokens: 100,
      prompt_cache_miss_tokens: 20,
      completion_tokens_details: { reasoning_tokens: 12 },
    },
    expected: { inputTokens: 20, outputTokens: 30, cacheReadTokens: 100, reasoningTokens: 12 },
  },
  reasoningReply: {
    reasoning: ['I should ', 'read the file.'],
    toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.txt"}' }],
  },
  expectReasoningReplay(body, first: Message) {
    const messages = body.messages as Record<string, unknown>[];
    expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(messages[2]).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'I should read the file.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
      ],
    });
    expect(messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'file body' });
    expect(first.content[0]).toEqual({ type: 'reasoning', text: 'I should read the file.' });
  },
  errorCases: [
    {
      name: 'a context-length 400',
      reply: {
        status: 400,
        error: {
          type: 'invalid_request_error',
          message:
            "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens.",
        },
      },
      code: 'CONTEXT_WINDOW_EXCEEDED',
      status: 400,
    },
    {
      name: 'another 400',
      reply: { status: 400, error: { message: 'Invalid tools' } },
      code: 'INVALID_REQUEST',
      status: 400,
    },
    {
      name: '401',
      reply: { status: 401, error: { type: 'authentication_error', message: 'bad key' } },
      code: 'AUTH',
      status: 401,
    },
    { name: '403', reply: { status: 403, error: { message: 'forbidden' } }, code: 'AUTH', status: 403 },
    {
      name: 'insufficient balance (402)',
      reply: { status: 402, error: { message: 'Insufficient Balance' } },
      code: 'QUOTA',
      status: 402,
    },
    {
      name: "OpenAI's 429 insufficient_quota",
      reply: {
        status: 429,
        error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'quota' },
      },
      code: 'QUOTA',
      status: 429,
    },
    {
      name: '429',
      reply: { status: 429, error: { message: 'rate limited' } },
      code: 'RATE_LIMIT',
      status: 429,
    },
    { name: '500', reply: { status: 500, error: { message: 'boom' } }, code: 'SERVER', status: 500 },
    {
      name: '503 (server busy)',
      reply: { status: 503, error: { message: 'Server overloaded' } },
      code: 'SERVER',
      status: 503,
    },
    {
      name: 'a content filter finish',
      reply: { text: 'partial', finishReason: 'content_filter' },
      code: 'CONTENT_FILTER',
    },
  ],
  streamErrorCase: {
    reply: {
      text: 'partial',
      streamError: { message: 'upstream overloaded', type: 'server_error', code: 502 },
    },
    code: 'SERVER',
  },
});

describe('OpenAI-compatible specifics', () => {
  let server: FakeServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('sends a temperature only to a model that takes it while it is called', async () => {
    const calls: { model: string; reasoningEffort?: string }[] = [
      { model: 'gpt-4.1' }, // no reasoning: kept
      { model: 'gpt-5' }, // fixed sampling: dropped
      { model: 'gpt-5.5', reasoningEffort: 'none' }, // reasoning turned off: kept
      { model: 'gpt-5.5' }, // reasoning at its default: dropped
    ];
    server = await startFakeOpenAIServer(calls.map(() => ({ text: 'ok' })));
    const adapter = new OpenAICompatibleProvider({ provider: 'openai', baseUrl: server.url, apiKey: 'k' });
    for (const call of calls) {
      const request = { provider: 'openai', messages: [createUserMessage('q')], temperature: 0.3, ...call };
      for await (const chunk of adapter.stream(
        { ...adapter.prepare(request), messages: request.messages },
        new AbortController().signal,
      ))
        void chunk;
    }
    const sent = server.requests.map((request) => (request.body as { temperature?: number }).temperature);
    expect(sent).toEqual([0.3, undefined, 0.3, undefined]);
  });

  it('maps OpenAI cached tokens out of the prompt count', async () => {
    const { toTokenUsage } = await import('../../src/providers/openai-compatible/index.ts');
    expect(
      toTokenUsage({
        prompt_tokens: 2006,
        completion_tokens: 300,
        prompt_tokens_details: { cached_tokens: 1920 },
        completion_tokens_details: { reasoning_tokens: 128 },
      }),
    ).toEqual({ inputTokens: 86, outputTokens: 300, cacheReadTokens: 1920, reasoningTokens: 128 });
  });
});
