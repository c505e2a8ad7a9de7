import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Harness, LlmAdapter, Tool } from '../../src/index.ts';
import { AnthropicProvider, OpenAICompatibleProvider, createHarness, defineTool } from '../../src/index.ts';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.ts';
import type { FakeReply, FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { dataOf } from '../core/support.ts';

const readFile = defineTool<{ path: string }>({
  name: 'read_file',
  description: 'Read a file',
  effect: 'read',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
    additionalProperties: false,
  },
  isConcurrencySafe: () => true,
  execute: (args) => `contents of ${args.path}`,
}) as Tool<never>;

let server: FakeServer | undefined;
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.dispose();
  await server?.close();
  harness = undefined;
  server = undefined;
});

async function agentOver(
  adapter: (url: string) => LlmAdapter,
  start: (replies: FakeReply[]) => Promise<FakeServer>,
  replies: FakeReply[],
  model: string,
): Promise<Agent> {
  server = await start(replies);
  const provider = adapter(server.url);
  harness = createHarness({ providers: [provider], tools: [readFile] });
  return harness.createAgent({ provider: provider.provider, model });
}

describe('a real agent over the HTTP adapters', () => {
  it('DeepSeek thinking with tools: the loop’s next request carries reasoning_content, usage lands in the log', async () => {
    const agent = await agentOver(
      (url) => new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl: url, apiKey: 'k' }),
      startFakeOpenAIServer,
      [
        {
          reasoning: 'Read both.',
          toolCalls: [
            { id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
            { id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
          ],
          usage: {
            prompt_tokens: 50,
            completion_tokens: 10,
            prompt_cache_hit_tokens: 0,
            prompt_cache_miss_tokens: 50,
          },
        },
        {
          reasoning: 'Summarize.',
          text: 'a and b',
          usage: {
            prompt_tokens: 90,
            completion_tokens: 5,
            prompt_cache_hit_tokens: 64,
            prompt_cache_miss_tokens: 26,
          },
        },
      ],
      'deepseek-reasoner',
    );
    agent.followup('read a and b');
    await agent.whenIdle();
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    const second = server!.requests[1]!.body as { messages: Record<string, unknown>[] };
    expect(second.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
    ]);
    expect(second.messages[2]).toMatchObject({ reasoning_content: 'Read both.', content: null });
    expect(second.messages.slice(3)).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'contents of a' },
      { role: 'tool', tool_call_id: 'call_b', content: 'contents of b' },
    ]);
    expect(dataOf<{ usage: unknown }>(agent, 'assistant/message').map((entry) => entry.usage)).toEqual([
      { inputTokens: 50, outputTokens: 10 },
      { inputTokens: 26, outputTokens: 5, cacheReadTokens: 64 },
    ]);
  });

  it('Anthropic thinking with tools: the signed thinking block is replayed byte for byte', async () => {
    const agent = await agentOver(
      (url) => new AnthropicProvider({ baseUrl: url, apiKey: 'k' }),
      startFakeAnthropicServer,
      [
        {
          reasoning: ['Need ', 'the file.'],
          signature: 'sig-abc==',
          toolCalls: [{ id: 'toolu_1', name: 'read_file', arguments: '{"path":"a"}' }],
        },
        { text: 'done' },
      ],
      'claude-sonnet-4-5',
    );
    agent.send('read a', 'next-turn', true);
    await agent.whenIdle();
    expect(dataOf(agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    const second = server!.requests[1]!.body as { messages: { role: string; content: unknown[] }[] };
    expect(second.messages[1]!.content).toEqual([
      { type: 'thinking', thinking: 'Need the file.', signature: 'sig-abc==' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } },
    ]);
  });

  it('a response that breaks the wire format ends the turn with a typed error; the agent stays usable', async () => {
    const agent = await agentOver(
      (url) => new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl: url, apiKey: 'k' }),
      startFakeOpenAIServer,
      [{ raw: 'data: {"choices": "nope"}\n\n' }, { text: 'fine now' }],
      'deepseek-chat',
    );
    agent.followup('one');
    await agent.whenIdle();
    agent.followup('two');
    await agent.whenIdle();
    expect(
      dataOf<{ reason: { kind: string; error?: { code: string } } }>(agent, 'turn/end').map((end) => [
        end.reason.kind,
        end.reason.error?.code,
      ]),
    ).toEqual([
      ['error', 'INVALID_RESPONSE'],
      ['completed', undefined],
    ]);
  });
});
