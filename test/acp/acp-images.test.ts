import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { methods } from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from '../cli/rein-process.ts';
import { parseJsonLines, runRein, sandbox } from '../cli/rein-process.ts';
import type { AcpClient } from './acp-client.ts';
import { startAcp } from './acp-client.ts';

// A 1×1 PNG, base64 (68 bytes decoded).
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

let box: Sandbox | undefined;
let server: FakeServer | undefined;
const clients: AcpClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server?.close();
  box?.cleanup();
  server = undefined;
  box = undefined;
});

/** `rein acp` with DeepSeek and OpenAI keys pointed at one fake vendor; `model` picks the default route. */
async function start(model: string | undefined): Promise<AcpClient> {
  const acp = await startAcp({
    cwd: box!.workspace,
    env: {
      ...box!.env,
      DEEPSEEK_API_KEY: 'sk-acp-test',
      DEEPSEEK_BASE_URL: server!.url,
      OPENAI_API_KEY: 'sk-acp-test',
      OPENAI_BASE_URL: server!.url,
      REIN_MODEL: model,
    },
  });
  clients.push(acp);
  return acp;
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('rein acp: image prompts', () => {
  it('offers images for a vision default, sends them, refuses them after a switch to a text-only model, replays them on load', async () => {
    box = sandbox();
    mkdirSync(box.workspace, { recursive: true });
    server = await startFakeOpenAIServer([{ text: 'A single dot.' }, { text: 'Plain text then.' }]);
    const acp = await start('openai/gpt-4o');
    expect(acp.initialized.agentCapabilities?.promptCapabilities).toEqual({
      image: true,
      audio: false,
      embeddedContext: true,
    });
    const { sessionId, configOptions } = await acp.agent.request(methods.agent.session.new, {
      cwd: box.workspace,
      mcpServers: [],
    });
    const picker = configOptions?.find((option) => option.id === 'model');
    const choices = (picker as { options: { value: string; description?: string }[] }).options;
    expect(choices.find((choice) => choice.value === 'openai/gpt-4o')?.description).toBe('Takes images');
    expect(choices.find((choice) => choice.value === 'deepseek/deepseek-chat')?.description).toBeUndefined();

    const answer = await acp.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', mimeType: 'image/png', data: png },
      ],
    });
    expect(answer.stopReason).toBe('end_turn');
    const sent = server.requests[0]!.body as {
      model: string;
      messages: { role: string; content: unknown }[];
    };
    expect(sent.model).toBe('gpt-4o');
    expect(sent.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      ],
    });

    // The editor picks a model without image input: an image prompt is refused with Rein's code.
    await acp.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: 'model',
      value: 'deepseek/deepseek-chat',
    });
    const refused = await failureOf(
      acp.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: 'text', text: 'And this one?' },
          { type: 'image', mimeType: 'image/png', data: png },
        ],
      }),
    );
    expect(refused).toMatchObject({ code: -32602, data: { code: 'IMAGES_UNSUPPORTED' } });
    expect(server.requests).toHaveLength(1);
    // The agent stays up and the session goes on in text; the earlier image rides along as a note.
    const again = await acp.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'Describe it in words.' }],
    });
    expect(again.stopReason).toBe('end_turn');
    const second = server.requests[1]!.body as {
      model: string;
      messages: { role: string; content: unknown }[];
    };
    expect(second.model).toBe('deepseek-chat');
    expect(
      second.messages.filter((message) => message.role === 'user').map((message) => message.content),
    ).toEqual([
      'What is in this picture?\n[image: image/png, 68 B — not shown: this model does not accept images]',
      'Describe it in words.',
    ]);

    // The log keeps the image with the prompt, once; nothing of the refused prompt was stored.
    const shown = await runRein(['show', '--json', sessionId], { cwd: box.workspace, env: box.env });
    const prompts = parseJsonLines(shown.stdout)
      .durable.filter((event) => event.type === 'user/message')
      .map((event) => (event.data as { content: unknown }).content);
    expect(prompts).toEqual([
      [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', mediaType: 'image/png', data: png },
      ],
      [{ type: 'text', text: 'Describe it in words.' }],
    ]);
    const text = await runRein(['show', sessionId], { cwd: box.workspace, env: box.env });
    expect(text.stdout).toContain('> What is in this picture?\n> [image: image/png, 68 B]\n');

    // Another editor process loads the session: the replay shows the image as the user sent it.
    await acp.close();
    const loader = await start('openai/gpt-4o');
    await loader.agent.request(methods.agent.session.load, { sessionId, cwd: box.workspace, mcpServers: [] });
    const replayed = loader
      .updatesOf(sessionId)
      .filter((update) => update.sessionUpdate === 'user_message_chunk');
    expect(replayed.map((update) => update.content)).toEqual([
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image', mimeType: 'image/png', data: png },
      { type: 'text', text: 'Describe it in words.' },
    ]);
  });

  it('an embedded image file (a resource blob) reaches a vision model as an image', async () => {
    box = sandbox();
    mkdirSync(box.workspace, { recursive: true });
    server = await startFakeOpenAIServer([{ text: 'A dot.' }]);
    const acp = await start('openai/gpt-4o');
    const { sessionId } = await acp.agent.request(methods.agent.session.new, {
      cwd: box.workspace,
      mcpServers: [],
    });
    const answer = await acp.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'Look at' },
        { type: 'resource', resource: { uri: 'file:///tmp/dot.png', mimeType: 'image/png', blob: png } },
      ],
    });
    expect(answer.stopReason).toBe('end_turn');
    const sent = server.requests[0]!.body as { messages: { role: string; content: unknown }[] };
    expect(sent.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Look at' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      ],
    });
  });

  it('a text-only default: initialize does not offer images, and an image prompt is a JSON-RPC error the agent survives', async () => {
    box = sandbox();
    mkdirSync(box.workspace, { recursive: true });
    server = await startFakeOpenAIServer([{ text: 'Hello.' }]);
    const acp = await start('deepseek/deepseek-chat');
    expect(acp.initialized.agentCapabilities?.promptCapabilities?.image).toBe(false);
    const { sessionId } = await acp.agent.request(methods.agent.session.new, {
      cwd: box.workspace,
      mcpServers: [],
    });
    const refused = await failureOf(
      acp.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'image', mimeType: 'image/png', data: png }],
      }),
    );
    expect(refused).toMatchObject({ code: -32602, data: { code: 'IMAGES_UNSUPPORTED' } });
    // An image no model takes is refused with its own code, whatever the model.
    await acp.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: 'model',
      value: 'openai/gpt-4o',
    });
    const invalid = await failureOf(
      acp.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'image', mimeType: 'image/svg+xml', data: png }],
      }),
    );
    expect(invalid).toMatchObject({ code: -32602, data: { code: 'INVALID_IMAGE' } });
    expect(server.requests).toHaveLength(0);
    const answer = await acp.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'hi' }],
    });
    expect(answer.stopReason).toBe('end_turn');
  });
  it('an image larger than the model takes (its imageBytes) is refused before anything is queued', async () => {
    box = sandbox();
    mkdirSync(box.workspace, { recursive: true });
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, 'config.json'),
      JSON.stringify({ models: { 'openai/gpt-4o': { images: true, imageBytes: 64 } } }),
    );
    server = await startFakeOpenAIServer([{ text: 'Small enough.' }]);
    const acp = await start('openai/gpt-4o');
    const { sessionId } = await acp.agent.request(methods.agent.session.new, {
      cwd: box.workspace,
      mcpServers: [],
    });
    const refused = await failureOf(
      acp.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'image', mimeType: 'image/png', data: png }],
      }),
    );
    expect(refused).toMatchObject({ code: -32602, data: { code: 'IMAGES_TOO_LARGE' } });
    expect(server.requests).toHaveLength(0);
    const answer = await acp.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'image', mimeType: 'image/gif', data: 'R0lGODlhAQABAAAAACw=' }],
    });
    expect(answer.stopReason).toBe('end_turn');
    expect(server.requests).toHaveLength(1);
  });
});
