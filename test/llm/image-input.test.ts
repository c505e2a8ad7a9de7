import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ContentBlock, ImageBlock, Message } from '../../src/index.ts';
import {
  DiskSessionStore,
  HarnessError,
  checkImageContent,
  createHarness,
  defineTool,
  createUserMessage,
  maxMessageImageBytes,
} from '../../src/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';

// A 1×1 transparent PNG.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const image: ImageBlock = { type: 'image', mediaType: 'image/png', data: png };

let root: string | undefined;
afterEach(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof HarnessError ? error.code : 'not a HarnessError';
  }
  return undefined;
}

function userContent(messages: readonly Message[]): ContentBlock[][] {
  return messages.filter((message) => message.source.kind === 'user').map((message) => [...message.content]);
}

async function agentOver(model: ScriptedProvider, store?: DiskSessionStore) {
  const harness = createHarness({ providers: [model], tools: [], ...(store !== undefined ? { store } : {}) });
  const agent = await harness.createAgent({ id: 'images', provider: 'scripted', model: 'vision' });
  return { harness, agent };
}

describe('image content: the checks before a message is queued', () => {
  it('accepts png, jpeg, gif and webp as base64 or https, and names what is wrong otherwise', () => {
    for (const mediaType of ['image/png', 'image/jpeg', 'image/gif', 'image/webp']) {
      expect(codeOf(() => checkImageContent([{ type: 'image', mediaType, data: png }]))).toBeUndefined();
    }
    expect(
      codeOf(() =>
        checkImageContent([{ type: 'image', mediaType: 'image/png', url: 'https://x.test/a.png' }]),
      ),
    ).toBeUndefined();
    expect(codeOf(() => checkImageContent([{ type: 'image', mediaType: 'image/svg+xml', data: png }]))).toBe(
      'INVALID_IMAGE',
    );
    expect(
      codeOf(() => checkImageContent([{ type: 'image', mediaType: 'image/png', data: 'not base64!' }])),
    ).toBe('INVALID_IMAGE');
    expect(codeOf(() => checkImageContent([{ type: 'image', mediaType: 'image/png', data: '' }]))).toBe(
      'INVALID_IMAGE',
    );
    expect(
      codeOf(() => checkImageContent([{ type: 'image', mediaType: 'image/png', url: 'file:///etc/passwd' }])),
    ).toBe('INVALID_IMAGE');
    const half = 'A'.repeat(maxMessageImageBytes / 2);
    expect(
      codeOf(() =>
        checkImageContent([
          { type: 'image', mediaType: 'image/png', data: half },
          { type: 'image', mediaType: 'image/png', data: `${half}AAAA` },
        ]),
      ),
    ).toBe('IMAGES_TOO_LARGE');
  });

  it('keeps an image at the limit whole on disk: logged, resumed and replayed byte for byte', async () => {
    root = mkdtempSync(join(tmpdir(), 'rein-images-'));
    const model = new ScriptedProvider({ responses: [{ text: 'Big.' }, { text: 'Still big.' }] });
    const first = await agentOver(model, new DiskSessionStore({ root }));
    const largest: ImageBlock = {
      type: 'image',
      mediaType: 'image/png',
      data: 'A'.repeat(maxMessageImageBytes),
    };
    first.agent.followup([largest]);
    await first.agent.whenIdle();
    await first.harness.dispose();
    const second = createHarness({ providers: [model], tools: [], store: new DiskSessionStore({ root }) });
    const resumed = await second.resumeAgent('images');
    resumed.followup('and?');
    await resumed.whenIdle();
    const replayed = userContent(model.requests[1]!.messages)[0]![0] as ImageBlock;
    expect(replayed.data!.length).toBe(maxMessageImageBytes);
    expect(replayed.data === largest.data).toBe(true);
    await second.dispose();
  });

  it('refuses a huge image at followup with IMAGES_TOO_LARGE: nothing reaches the log or the disk', async () => {
    root = mkdtempSync(join(tmpdir(), 'rein-images-'));
    const model = new ScriptedProvider({ responses: [{ text: 'fine' }] });
    const { harness, agent } = await agentOver(model, new DiskSessionStore({ root }));
    const before = agent.session.events.length;
    const huge: ImageBlock = {
      type: 'image',
      mediaType: 'image/png',
      data: 'A'.repeat(maxMessageImageBytes + 4),
    };
    expect(codeOf(() => agent.followup([{ type: 'text', text: 'look' }, huge]))).toBe('IMAGES_TOO_LARGE');
    expect(agent.session.events.length).toBe(before);
    expect(agent.inbox.list('next-turn')).toEqual([]);
    // The session goes on: the next prompt is a turn like any other.
    agent.followup('Hello');
    await agent.whenIdle();
    await harness.dispose();
    // What is on disk, read back as another process would.
    const types = (await new DiskSessionStore({ root }).read('images')).events.map((event) => event.type);
    expect(types.filter((type) => type === 'user/message')).toHaveLength(1);
    expect(types.at(-1)).toBe('turn/end');
    expect(model.requests).toHaveLength(1);
  });
});

describe('image content: through the loop', () => {
  it('logs the image with the user message, sends it, and replays it into later requests and a resumed session', async () => {
    root = mkdtempSync(join(tmpdir(), 'rein-images-'));
    const model = new ScriptedProvider({
      responses: [{ text: 'A dot.' }, { text: 'Still a dot.' }, { text: 'Yes.' }],
    });
    const first = await agentOver(model, new DiskSessionStore({ root }));
    first.agent.followup([{ type: 'text', text: 'What is this?' }, image]);
    await first.agent.whenIdle();
    first.agent.followup('And now?');
    await first.agent.whenIdle();
    const logged = first.agent.session.eventsOfType('user/message').map((event) => event.data.content);
    expect(logged[0]).toEqual([{ type: 'text', text: 'What is this?' }, image]);
    expect(userContent(model.requests[0]!.messages)).toEqual([
      [{ type: 'text', text: 'What is this?' }, image],
    ]);
    expect(userContent(model.requests[1]!.messages)[0]).toEqual([
      { type: 'text', text: 'What is this?' },
      image,
    ]);
    await first.harness.dispose();

    const second = createHarness({ providers: [model], tools: [], store: new DiskSessionStore({ root }) });
    const resumed = await second.resumeAgent('images');
    resumed.followup('Sure?');
    await resumed.whenIdle();
    expect(userContent(model.requests[2]!.messages)[0]).toEqual([
      { type: 'text', text: 'What is this?' },
      image,
    ]);
    await second.dispose();
  });

  it('a model without image input: IMAGES_UNSUPPORTED before any request, the message kept, later prompts go on with a note', async () => {
    const model = new ScriptedProvider({ images: false, responses: [{ text: 'Text only here.' }] });
    const { harness, agent } = await agentOver(model);
    agent.followup([{ type: 'text', text: 'What is this?' }, image]);
    await agent.whenIdle();
    expect(model.requests).toHaveLength(0);
    const events = agent.session.events;
    const failed = events.find((event) => event.type === 'request/failed')!;
    expect((failed.data as { failure: { code: string } }).failure.code).toBe('IMAGES_UNSUPPORTED');
    expect(events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'error', error: { code: 'IMAGES_UNSUPPORTED' } } },
    });
    // Nothing is lost: the prompt and its image stay in the log.
    expect(agent.session.eventsOfType('user/message')[0]!.data.content).toEqual([
      { type: 'text', text: 'What is this?' },
      image,
    ]);

    agent.followup('Then describe the project.');
    await agent.whenIdle();
    expect(model.requests).toHaveLength(1);
    expect(userContent(model.requests[0]!.messages)).toEqual([
      [
        { type: 'text', text: 'What is this?' },
        { type: 'text', text: '\n[image: image/png, 68 B — not shown: this model does not accept images]' },
      ],
      [{ type: 'text', text: 'Then describe the project.' }],
    ]);
    expect(agent.session.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'completed' } },
    });
    await harness.dispose();
  });

  it('a model with a size limit per image (imageBytes): a larger prompt image is IMAGES_TOO_LARGE, larger ones back in the history and in tool results become notes', async () => {
    const big: ImageBlock = { type: 'image', mediaType: 'image/png', data: 'A'.repeat(200) };
    const screenshot = defineTool<Record<string, never>>({
      name: 'screenshot',
      description: 'returns a large image',
      parameters: { type: 'object' },
      execute: () => ({ content: [{ type: 'text', text: 'the screen' }, big] }),
    });
    const model = new ScriptedProvider({
      models: { vision: { images: true, imageBytes: 100 } },
      responses: [{ toolCalls: [{ id: 's1', name: 'screenshot', arguments: {} }] }, { text: 'Seen.' }],
    });
    const harness = createHarness({ providers: [model], tools: [screenshot] });
    const agent = await harness.createAgent({ id: 'limit', provider: 'scripted', model: 'vision' });
    agent.followup([{ type: 'text', text: 'Too big?' }, big]);
    await agent.whenIdle();
    expect(model.requests).toHaveLength(0);
    expect(agent.session.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'error', error: { code: 'IMAGES_TOO_LARGE' } } },
    });

    agent.followup([{ type: 'text', text: 'This one fits.' }, image]);
    await agent.whenIdle();
    const note = '[image: image/png, 150 B — not shown: larger than the 100 B of base64 this model takes]';
    // The first request: the old prompt's image is a note, the new one (92 characters) is sent.
    expect(userContent(model.requests[0]!.messages)).toEqual([
      [
        { type: 'text', text: 'Too big?' },
        { type: 'text', text: `\n${note}` },
      ],
      [{ type: 'text', text: 'This one fits.' }, image],
    ]);
    // The second: the tool result's image is a note inside the result; the log keeps the image itself.
    const toolMessage = model.requests[1]!.messages.at(-1)!;
    expect(toolMessage.content).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        toolCallId: 's1',
        content: [
          { type: 'text', text: 'the screen' },
          { type: 'text', text: `\n${note}` },
        ],
      }),
    ]);
    const logged = agent.session.eventsOfType('tool/result')[0]!.data.message.content[0];
    expect(logged).toMatchObject({ content: [{ type: 'text', text: 'the screen' }, big] });
    expect(agent.session.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: { kind: 'completed' } },
    });
    await harness.dispose();
  });

  it('a model with a budget per request keeps the newest images that fit; older ones become notes, a prompt over it alone is refused', async () => {
    const model = new ScriptedProvider({
      models: { budget: { images: true, imagesPerRequest: 2, imageBytesPerRequest: 200 } },
      fallback: { text: 'ok' },
    });
    const harness = createHarness({ providers: [model], tools: [] });
    const agent = await harness.createAgent({ id: 'budget', provider: 'scripted', model: 'budget' });
    const gif: ImageBlock = { type: 'image', mediaType: 'image/gif', data: 'R0lGODlhAQABAAAAACw=' };
    for (const text of ['one', 'two', 'three']) {
      agent.followup([{ type: 'text', text }, image]);
      await agent.whenIdle();
    }
    const budgetNote =
      '[image: image/png, 68 B — not shown: an older image past the 2 images or 200 B of images this model takes in one request]';
    expect(userContent(model.requests[1]!.messages)).toEqual([
      [{ type: 'text', text: 'one' }, image],
      [{ type: 'text', text: 'two' }, image],
    ]);
    // 92 + 92 fit 200 characters and 2 images; the third request turns the oldest into a note.
    expect(userContent(model.requests[2]!.messages)).toEqual([
      [
        { type: 'text', text: 'one' },
        { type: 'text', text: `\n${budgetNote}` },
      ],
      [{ type: 'text', text: 'two' }, image],
      [{ type: 'text', text: 'three' }, image],
    ]);
    // Bytes: two PNGs and a GIF are 204 characters; the GIF fits with one PNG, so the older PNGs are notes.
    agent.followup([{ type: 'text', text: 'four' }, gif]);
    await agent.whenIdle();
    expect(userContent(model.requests[3]!.messages).map((content) => content.at(-1)!.type)).toEqual([
      'text',
      'text',
      'image',
      'image',
    ]);
    // A prompt that alone carries more than the budget is refused before it is sent.
    agent.followup([{ type: 'text', text: 'five' }, image, image, image]);
    await agent.whenIdle();
    expect(model.requests).toHaveLength(4);
    expect(agent.session.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: {
        reason: {
          kind: 'error',
          error: {
            code: 'IMAGES_TOO_LARGE',
            message: expect.stringContaining('takes at most 2 images or 200 B of images in one request'),
          },
        },
      },
    });
    await harness.dispose();
  });

  it('createUserMessage keeps image blocks as given (frozen), for followup', () => {
    const message = createUserMessage([{ type: 'text', text: 'see' }, image]);
    expect(message.content).toEqual([{ type: 'text', text: 'see' }, image]);
    expect(Object.isFrozen(message.content[1])).toBe(true);
  });
});
