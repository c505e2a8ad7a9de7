import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/index.ts';
import {
  OpenAICompatibleProvider,
  buildChatCompletionsBody,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
} from '../../src/internal.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { collect } from './adapter-conformance.ts';

const deepseek = { kind: 'model' as const, provider: 'deepseek', model: 'deepseek-reasoner' };
const style = {
  provider: 'deepseek',
  reasoningReplay: true,
  maxTokensField: 'max_tokens' as const,
  streamUsage: true,
};

function body(messages: Message[], overrides: Partial<typeof style> = {}) {
  return buildChatCompletionsBody(
    { provider: 'deepseek', model: 'deepseek-reasoner', messages },
    { ...style, ...overrides },
  ) as {
    messages: Record<string, unknown>[];
  };
}

describe('DeepSeek reasoning_content replay', () => {
  let server: FakeServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('parses a recorded thinking-mode transcript with two parallel calls, keep-alives and cache usage', async () => {
    server = await startFakeOpenAIServer([{ fixture: 'deepseek-reasoner-tool-calls.sse' }]);
    const adapter = new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl: server.url, apiKey: 'k' });
    const { response } = await collect(adapter, {
      provider: 'deepseek',
      model: 'deepseek-reasoner',
      messages: [createUserMessage('read both')],
    });
    expect(response.content).toEqual([
      { type: 'reasoning', text: 'Both files are needed; read them together.' },
      {
        type: 'tool-call',
        id: 'call_00_aB3dE5fG7hI9jK1lM3nO5pQ7',
        name: 'read_file',
        arguments: '{"path": "README.md"}',
      },
      {
        type: 'tool-call',
        id: 'call_01_rS9tU1vW3xY5zA7bC9dE1fG3',
        name: 'read_file',
        arguments: '{"path": "package.json"}',
      },
    ]);
    expect(response.finish).toEqual({ kind: 'tool-calls' });
    expect(response.usage).toEqual({
      inputTokens: 115,
      outputTokens: 87,
      cacheReadTokens: 1408,
      reasoningTokens: 41,
    });
  });

  it('replays reasoning of every exchange that called tools, in all later requests, and only those', () => {
    const plain = createAssistantMessage(
      [
        { type: 'reasoning', text: 'easy' },
        { type: 'text', text: '4' },
      ],
      deepseek,
    );
    const calling = createAssistantMessage(
      [
        { type: 'reasoning', text: 'need a file' },
        { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{}' },
      ],
      deepseek,
    );
    const after = createAssistantMessage(
      [
        { type: 'reasoning', text: 'got it' },
        { type: 'text', text: 'done' },
      ],
      deepseek,
    );
    const messages = [
      createUserMessage('2+2?'),
      plain,
      createUserMessage('read it'),
      calling,
      createToolResultMessage('c1', [{ type: 'text', text: 'data' }], false),
      after,
      createUserMessage('thanks'),
    ];
    const wire = body(messages).messages;
    expect(wire.map((message) => [message.role, message.reasoning_content])).toEqual([
      ['user', undefined],
      ['assistant', undefined],
      ['user', undefined],
      ['assistant', 'need a file'],
      ['tool', undefined],
      ['assistant', 'got it'],
      ['user', undefined],
    ]);
    expect(
      body(messages, { reasoningReplay: false }).messages.some((message) => 'reasoning_content' in message),
    ).toBe(false);
  });

  it('never sends another provider’s reasoning as reasoning_content', () => {
    const foreign = createAssistantMessage(
      [
        { type: 'reasoning', text: 'claude thoughts', signature: 'sig' },
        { type: 'tool-call', id: 'c1', name: 'x', arguments: '{}' },
      ],
      { kind: 'model', provider: 'anthropic', model: 'claude-sonnet-4-5' },
    );
    const wire = body([
      createUserMessage('go'),
      foreign,
      createToolResultMessage('c1', [{ type: 'text', text: 'ok' }], false),
    ]).messages;
    expect(wire[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{}' } }],
    });
  });

  it('maps images, tool errors, max tokens, stop sequences and reasoning effort onto the wire', () => {
    const request = buildChatCompletionsBody(
      {
        provider: 'openai',
        model: 'gpt-5',
        system: 'sys',
        maxTokens: 50,
        temperature: 0,
        stop: ['END'],
        reasoningEffort: 'low',
        messages: [
          createUserMessage([
            { type: 'text', text: 'what is this?' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ]),
          createToolResultMessage('c9', [], true),
        ],
      },
      {
        provider: 'openai',
        reasoningReplay: false,
        maxTokensField: 'max_completion_tokens',
        streamUsage: true,
      },
    );
    expect(request).toEqual({
      model: 'gpt-5',
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 50,
      temperature: 0,
      stop: ['END'],
      reasoning_effort: 'low',
      messages: [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c9', content: 'error' },
      ],
    });
  });

  it('maps finish_reason length to max-tokens and accepts a stream without [DONE]', async () => {
    server = await startFakeOpenAIServer([{ text: 'cut sho', finishReason: 'length', omitDone: true }]);
    const adapter = new OpenAICompatibleProvider({ provider: 'openai', baseUrl: server.url, apiKey: 'k' });
    const { response } = await collect(adapter, {
      provider: 'openai',
      model: 'gpt-4o',
      messages: [createUserMessage('x')],
    });
    expect(response.finish).toEqual({ kind: 'max-tokens' });
    expect(response.content).toEqual([{ type: 'text', text: 'cut sho' }]);
  });
});
