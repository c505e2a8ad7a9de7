import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { parseJsonLines, runRein, sandbox } from './rein-process.ts';

// A 1×1 PNG (68 bytes) and the first bytes of a JPEG, base64.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const jpeg = '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDA==';

let box: Sandbox;
let server: FakeServer | undefined;

beforeEach(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'dot.png'), Buffer.from(png, 'base64'));
  // The content decides the type, not the name.
  writeFileSync(join(box.workspace, 'photo.img'), Buffer.from(jpeg, 'base64'));
  writeFileSync(join(box.workspace, 'notes.png'), 'just text\n');
  writeFileSync(join(box.workspace, 'README.md'), '# Pictures\n');
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  box.cleanup();
});

function storedSessions(): string[] {
  const directory = join(box.home, 'sessions');
  return existsSync(directory) ? readdirSync(directory).filter((name) => name.endsWith('.jsonl')) : [];
}

describe('rein run --image', () => {
  it('attaches each image after the prompt, logs it, and rein show names it', async () => {
    server = await startFakeOpenAIServer([{ text: 'A dot and a photo.' }]);
    const env = { ...box.env, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.url };
    const result = await runRein(
      [
        'run',
        '--json',
        '--model',
        'openai/gpt-4o',
        '--image',
        'dot.png',
        '--image',
        'photo.img',
        'what are these?',
      ],
      { cwd: box.workspace, env },
    );
    expect(result.code).toBe(0);
    const body = server.requests[0]!.body as { messages: { role: string; content: unknown }[] };
    expect(body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what are these?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg}` } },
      ],
    });
    const durable = parseJsonLines(result.stdout).durable;
    const prompt = durable.find((event) => event.type === 'user/message')!.data as { content: unknown };
    expect(prompt.content).toEqual([
      { type: 'text', text: 'what are these?' },
      { type: 'image', mediaType: 'image/png', data: png },
      { type: 'image', mediaType: 'image/jpeg', data: jpeg },
    ]);
    const shown = await runRein(['show', '--last'], { cwd: box.workspace, env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      '> what are these?\n> [image: image/png, 68 B]\n> [image: image/jpeg, 40 B]\n',
    );
  });

  it('the offline demo takes an image without a prompt text', async () => {
    const result = await runRein(['run', '--image', 'dot.png'], { cwd: box.workspace, env: box.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('You attached an image (image/png, 68 B)');
  });

  it('refuses a missing file, a file that is no image, and a text-only model, before any session or request', async () => {
    server = await startFakeOpenAIServer([{ text: 'never' }]);
    const env = { ...box.env, DEEPSEEK_API_KEY: 'sk-test', DEEPSEEK_BASE_URL: server.url };
    const missing = await runRein(['run', '--image', 'nope.png', 'look'], { cwd: box.workspace, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^rein: error IMAGE_NOT_FOUND: cannot read the image nope\.png/m);
    const notImage = await runRein(['run', '--image', 'notes.png', 'look'], { cwd: box.workspace, env });
    expect(notImage.code).toBe(1);
    expect(notImage.stderr).toContain(
      'rein: error INVALID_IMAGE: notes.png is not a PNG, JPEG, GIF or WebP image',
    );
    const textOnly = await runRein(['run', '--image', 'dot.png', 'look'], { cwd: box.workspace, env });
    expect(textOnly.code).toBe(1);
    expect(textOnly.stderr).toContain(
      'rein: error IMAGES_UNSUPPORTED: deepseek/deepseek-v4-flash does not accept images',
    );
    expect(server.requests).toHaveLength(0);
    expect(storedSessions()).toEqual([]);
  });

  it("refuses an image larger than the model takes (a config entry's imageBytes), before any session or request", async () => {
    server = await startFakeOpenAIServer([{ text: 'never' }]);
    mkdirSync(box.home, { recursive: true });
    writeFileSync(
      join(box.home, 'config.json'),
      JSON.stringify({ models: { 'openai/gpt-4o': { images: true, imageBytes: 64 } } }),
    );
    const env = { ...box.env, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.url };
    const result = await runRein(['run', '--model', 'openai/gpt-4o', '--image', 'dot.png', 'look'], {
      cwd: box.workspace,
      env,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'rein: error IMAGES_TOO_LARGE: openai/gpt-4o takes images of up to 64 B of base64, and this one has 92 B',
    );
    expect(server.requests).toHaveLength(0);
    expect(storedSessions()).toEqual([]);
  });
});
