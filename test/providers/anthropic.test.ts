import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/index.ts';
import {
  AnthropicProvider,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
} from '../../src/index.ts';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { adapterConformance, collect } from './adapter-conformance.ts';

adapterConformance({
  name: 'Anthropic',
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  path: '/v1/messages',
  startServer: startFakeAnthropicServer,
  createAdapter: (baseUrl, options) => new AnthropicProvider({ baseUrl, apiKey: 'sk-ant-test', ...options }),
  usage: {
    wire: {
      input_tokens: 20,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 50,
      output_tokens: 30,
    },
    expected: { inputTokens: 20, outputTokens: 30, cacheReadTokens: 100, cacheWriteTokens: 50 },
  },
  reasoningReply: {
    reasoning: ['I should ', 'read the file.'],
    signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
    toolCalls: [{ id: 'toolu_01', name: 'read_file', arguments: '{"path":"a.txt"}' }],
  },
  expectReasoningReplay(body, first: Message) {
    const messages = body.messages as { role: string; content: unknown[] }[];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[1]!.content).toEqual([
      {
        type: 'thinking',
        thinking: 'I should read the file.',
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
      },
      { type: 'tool_use', id: 'toolu_01', name: 'read_file', input: { path: 'a.txt' } },
    ]);
    expect(messages[2]!.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01',
        content: [{ type: 'text', text: 'file body' }],
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(first.content[0]).toEqual({
      type: 'reasoning',
      text: 'I should read the file.',
      signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
    });
  },
  errorCases: [
    {
      name: 'a prompt-too-long 400',
      reply: {
        status: 400,
        error: {
          type: 'invalid_request_error',
          message: 'prompt is too long: 210345 tokens > 200000 maximum',
        },
      },
      code: 'CONTEXT_WINDOW_EXCEEDED',
      status: 400,
    },
    {
      name: 'another 400',
      reply: { status: 400, error: { type: 'invalid_request_error', message: 'messages: field required' } },
      code: 'INVALID_REQUEST',
      status: 400,
    },
    {
      name: '401',
      reply: { status: 401, error: { type: 'authentication_error', message: 'invalid x-api-key' } },
      code: 'AUTH',
      status: 401,
    },
    {
      name: '403',
      reply: { status: 403, error: { type: 'permission_error', message: 'no access' } },
      code: 'AUTH',
      status: 403,
    },
    {
      name: 'a billing 400',
      reply: { status: 400, error: { type: 'billing_error', message: 'Your credit balance is too low' } },
      code: 'QUOTA',
      status: 400,
    },
    {
      name: '429',
      reply: { status: 429, error: { type: 'rate_limit_error', message: 'slow' } },
      code: 'RATE_LIMIT',
      status: 429,
    },
    {
      name: '500',
      reply: { status: 500, error: { type: 'api_error', message: 'internal' } },
      code: 'SERVER',
      status: 500,
    },
    {
      name: '529 overloaded_error',
      reply: { status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } },
      code: 'SERVER',
      status: 529,
    },
    { name: 'a refusal', reply: { text: 'I cannot', finishReason: 'refusal' }, code: 'CONTENT_FILTER' },
  ],
  streamErrorCase: {
    reply: { text: 'partial', streamError: { type: 'overloaded_error', message: 'Overloaded' } },
    code: 'SERVER',
  },
});

describe('Anthropic specifics', () => {
  let server: FakeServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('sends the key, version and cache breakpoints on system, the tool list, the latest message and where the previous request ended', async () => {
    server = await startFakeAnthropicServer([{ text: 'ok' }]);
    const adapter = new AnthropicProvider({ baseUrl: server.url, apiKey: 'sk-ant-test' });
    await collect(adapter, {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      system: 'Be brief.',
      messages: [
        createUserMessage('first'),
        createAssistantMessage([{ type: 'text', text: 'hi' }], {
          kind: 'model',
          provider: 'anthropic',
          model: 'm',
        }),
        createUserMessage('second'),
      ],
      tools: [
        { name: 'a', description: 'A', parameters: { type: 'object' } },
        { name: 'b', description: 'B', parameters: { type: 'object' } },
      ],
    });
    const request = server.requests[0]!;
    expect(request.headers['x-api-key']).toBe('sk-ant-test');
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64_000,
      stream: true,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        // The previous request ended here: its prefix stays reachable however many blocks follow.
        { role: 'user', content: [{ type: 'text', text: 'first', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
        { role: 'user', content: [{ type: 'text', text: 'second', cache_control: { type: 'ephemeral' } }] },
      ],
      tools: [
        { name: 'a', description: 'A', input_schema: { type: 'object' } },
        {
          name: 'b',
          description: 'B',
          input_schema: { type: 'object' },
          cache_control: { type: 'ephemeral' },
        },
      ],
    });
  });

  it('replays redacted thinking unchanged and drops reasoning another provider produced', async () => {
    server = await startFakeAnthropicServer([
      { redactedThinking: 'EmwKAhgBEgy3va3pzix', text: 'answer' },
      { text: 'next' },
    ]);
    const adapter = new AnthropicProvider({ baseUrl: server.url, apiKey: 'k' });
    const first = await collect(adapter, {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      messages: [createUserMessage('q')],
    });
    expect(first.response.content).toEqual([
      { type: 'reasoning', text: '', redacted: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: 'answer' },
    ]);
    const own = createAssistantMessage(first.response.content, {
      kind: 'model',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
    });
    const foreign = createAssistantMessage(
      [
        { type: 'reasoning', text: 'deepseek thoughts' },
        { type: 'text', text: 'earlier' },
      ],
      {
        kind: 'model',
        provider: 'deepseek',
        model: 'deepseek-reasoner',
      },
    );
    await collect(adapter, {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      messages: [createUserMessage('q0'), foreign, createUserMessage('q'), own, createUserMessage('more')],
    });
    const messages = (server.requests[1]!.body as { messages: { content: unknown[] }[] }).messages;
    expect(messages[1]!.content).toEqual([{ type: 'text', text: 'earlier' }]);
    expect(messages[3]!.content).toEqual([
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: 'answer' },
    ]);
  });

  it('merges tool results with a steering message into one user turn, results first', async () => {
    server = await startFakeAnthropicServer([{ text: 'ok' }]);
    const adapter = new AnthropicProvider({ baseUrl: server.url, apiKey: 'k', promptCaching: false });
    const call = createAssistantMessage([{ type: 'tool-call', id: 't1', name: 'x', arguments: 'not json' }], {
      kind: 'model',
      provider: 'anthropic',
      model: 'm',
    });
    await collect(adapter, {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      messages: [
        createUserMessage('go'),
        call,
        createToolResultMessage('t1', [{ type: 'text', text: 'bad args' }], true),
        createUserMessage('also this'),
      ],
    });
    const messages = (server.requests[0]!.body as { messages: unknown[] }).messages;
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'x', input: { raw_arguments: 'not json' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'text', text: 'bad args' }],
            is_error: true,
          },
          { type: 'text', text: 'also this' },
        ],
      },
    ]);
  });

  it('turns reasoning effort into a thinking budget inside max_tokens, without temperature', async () => {
    server = await startFakeAnthropicServer([{ text: 'ok' }]);
    const adapter = new AnthropicProvider({ baseUrl: server.url, apiKey: 'k' });
    await collect(adapter, {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      maxTokens: 4096,
      temperature: 0.2,
      reasoningEffort: 'high',
      messages: [createUserMessage('q')],
    });
    const body = server.requests[0]!.body as Record<string, unknown>;
    expect(body.max_tokens).toBe(4096);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 3072 });
    expect(body).not.toHaveProperty('temperature');
    expect(() =>
      adapter.prepare({ provider: 'anthropic', model: 'claude-sonnet-4-5', reasoningEffort: 'lots' }),
    ).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_REASONING_EFFORT' }));
  });

  it('asks a model that thinks adaptively for an effort level, never a token budget', async () => {
    server = await startFakeAnthropicServer([{ text: 'ok' }, { text: 'ok' }, { text: 'ok' }, { text: 'ok' }]);
    const adapter = new AnthropicProvider({ baseUrl: server.url, apiKey: 'k' });
    const ask = (model: string, extra: Record<string, unknown>) =>
      collect(adapter, {
        provider: 'anthropic',
        model,
        messages: [createUserMessage('q')],
        ...extra,
      });
    // Sonnet 4.6 thinks adaptively and still takes a temperature when thinking is off.
    await ask('claude-sonnet-4-6', { reasoningEffort: 'minimal', temperature: 0.2 });
    await ask('claude-sonnet-4-6', { temperature: 0.2 });
    // Sonnet 5 rejects sampling parameters: none is sent, whatever the call says.
    await ask('claude-sonnet-5', { temperature: 0.2 });
    const [adaptive, plain, fixed] = server.requests.map(
      (request) => request.body as Record<string, unknown>,
    );
    expect(adaptive!.thinking).toEqual({ type: 'adaptive' });
    expect(adaptive!.output_config).toEqual({ effort: 'low' });
    expect(adaptive).not.toHaveProperty('temperature');
    expect(plain).not.toHaveProperty('thinking');
    expect(plain).not.toHaveProperty('output_config');
    expect(plain!.temperature).toBe(0.2);
    expect(fixed).not.toHaveProperty('temperature');
    expect(fixed).not.toHaveProperty('thinking');
    // A token budget means nothing to a model that only thinks adaptively; a model Rein does not know is
    // taken as one. Sonnet 4.6 still takes a budget given as one.
    await ask('claude-sonnet-4-6', { reasoningEffort: '8000' });
    expect((server.requests[3]!.body as Record<string, unknown>).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 8000,
    });
    for (const model of ['claude-opus-5-5', 'claude-opus-9']) {
      expect(() => adapter.prepare({ provider: 'anthropic', model, reasoningEffort: '8000' })).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_REASONING_EFFORT' }),
      );
      expect(adapter.prepare({ provider: 'anthropic', model, reasoningEffort: 'max' }).model).toBe(model);
    }
  });

  it('parses a recorded transcript with thinking, text and a tool call', async () => {
    server = await startFakeAnthropicServer([{ fixture: 'anthropic-thinking-tool-use.sse' }]);
    const adapter = new AnthropicProvider({ baseUrl: server.url, apiKey: 'k' });
    const { response } = await collect(adapter, {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      messages: [createUserMessage('weather?')],
    });
    expect(response.content).toEqual([
      {
        type: 'reasoning',
        text: 'The user wants the weather in Paris. I will call the tool.',
        signature: 'ErUBCkYIBRgCIkC0fake0signature0for0tests==',
      },
      { type: 'text', text: 'Let me check.' },
      {
        type: 'tool-call',
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
        arguments: '{"location": "Paris, France"}',
      },
    ]);
    expect(response.finish).toEqual({ kind: 'tool-calls' });
    expect(response.usage).toEqual({
      inputTokens: 472,
      outputTokens: 89,
      cacheReadTokens: 1024,
      cacheWriteTokens: 128,
    });
  });
});
