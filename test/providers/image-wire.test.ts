import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, Harness, ImageBlock, LlmAdapter } from '../../src/index.ts';
import { AnthropicProvider, OpenAICompatibleProvider, createHarness } from '../../src/index.ts';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.ts';
import type { FakeReply, FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { dataOf } from '../core/support.ts';

// A 1×1 PNG and a 1×1 JPEG header, base64.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const jpeg = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDA==';
const pngBlock: ImageBlock = { type: 'image', mediaType: 'image/png', data: png };
const jpegBlock: ImageBlock = { type: 'image', mediaType: 'image/jpeg', data: jpeg };

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
  harness = createHarness({ providers: [provider], tools: [] });
  return harness.createAgent({ provider: provider.provider, model });
}

describe('image prompts on the vendor wire', () => {
  it('Anthropic Messages: base64 image blocks after the text, in order, and again on the next request', async () => {
    const agent = await agentOver(
      (url) => new AnthropicProvider({ baseUrl: url, apiKey: 'k', promptCaching: false }),
      startFakeAnthropicServer,
      [{ text: 'A dot and a photo.' }, { text: 'Yes.' }],
      'claude-sonnet-4-5',
    );
    agent.followup([{ type: 'text', text: 'What are these?' }, pngBlock, jpegBlock]);
    await agent.whenIdle();
    agent.followup('Sure?');
    await agent.whenIdle();
    expect(dataOf(agent, 'turn/end').map((end) => (end as { reason: unknown }).reason)).toEqual([
      { kind: 'completed' },
      { kind: 'completed' },
    ]);
    const prompt = {
      role: 'user',
      content: [
        { type: 'text', text: 'What are these?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: jpeg } },
      ],
    };
    expect((server!.requests[0]!.body as { messages: unknown[] }).messages).toEqual([prompt]);
    expect((server!.requests[1]!.body as { messages: unknown[] }).messages).toEqual([
      prompt,
      { role: 'assistant', content: [{ type: 'text', text: 'A dot and a photo.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Sure?' }] },
    ]);
  });

  it('OpenAI Chat Completions: image_url parts with data URLs', async () => {
    const agent = await agentOver(
      (url) =>
        new OpenAICompatibleProvider({
          provider: 'openai',
          baseUrl: url,
          apiKey: 'k',
          maxTokensField: 'max_completion_tokens',
        }),
      startFakeOpenAIServer,
      [{ text: 'A dot.' }],
      'gpt-4o',
    );
    agent.followup([pngBlock, { type: 'text', text: 'What is this?' }]);
    await agent.whenIdle();
    const body = server!.requests[0]!.body as { messages: unknown[] };
    expect(body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        { type: 'text', text: 'What is this?' },
      ],
    });
  });

  it('a text-only model (DeepSeek): IMAGES_UNSUPPORTED, the vendor never called, the prompt kept in the log', async () => {
    const agent = await agentOver(
      (url) => new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl: url, apiKey: 'k' }),
      startFakeOpenAIServer,
      [{ text: 'Text it is.' }],
      'deepseek-chat',
    );
    agent.followup([{ type: 'text', text: 'What is this?' }, pngBlock]);
    await agent.whenIdle();
    expect(server!.requests).toHaveLength(0);
    expect(dataOf(agent, 'turn/end')).toEqual([
      {
        turn: 1,
        reason: {
          kind: 'error',
          error: expect.objectContaining({ code: 'IMAGES_UNSUPPORTED' }) as unknown,
        },
      },
    ]);
    expect(dataOf<{ content: unknown }>(agent, 'user/message')[0]!.content).toEqual([
      { type: 'text', text: 'What is this?' },
      pngBlock,
    ]);
    // A text prompt after it is sent, the earlier image as a note the vendor accepts.
    agent.followup('Then just say hi.');
    await agent.whenIdle();
    const body = server!.requests[0]!.body as { messages: { role: string; content: unknown }[] };
    expect(body.messages.filter((message) => message.role === 'user')).toEqual([
      {
        role: 'user',
        content: 'What is this?\n[image: image/png, 68 B — not shown: this model does not accept images]',
      },
      { role: 'user', content: 'Then just say hi.' },
    ]);
  });
  it('Anthropic refuses images over 5 MB of base64: such a prompt never reaches it, later requests carry a note', async () => {
    const agent = await agentOver(
      (url) => new AnthropicProvider({ baseUrl: url, apiKey: 'k', promptCaching: false }),
      startFakeAnthropicServer,
      [{ text: 'Small one seen.' }],
      'claude-sonnet-4-5',
    );
    const large: ImageBlock = { type: 'image', mediaType: 'image/png', data: 'A'.repeat(5 * 1_048_576 + 4) };
    agent.followup([{ type: 'text', text: 'A big screenshot' }, large]);
    await agent.whenIdle();
    expect(server!.requests).toHaveLength(0);
    expect(dataOf(agent, 'turn/end')).toEqual([
      {
        turn: 1,
        reason: { kind: 'error', error: expect.objectContaining({ code: 'IMAGES_TOO_LARGE' }) as unknown },
      },
    ]);
    agent.followup([{ type: 'text', text: 'A small one' }, pngBlock]);
    await agent.whenIdle();
    const body = server!.requests[0]!.body as { messages: unknown[] };
    // Two user messages in a row are one on Anthropic's wire.
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A big screenshot' },
          {
            type: 'text',
            text: '\n[image: image/png, 3.8 MB — not shown: larger than the 5.0 MB of base64 this model takes]',
          },
          { type: 'text', text: 'A small one' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        ],
      },
    ]);
  });
});
