import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runRein } from '../cli/rein-process.ts';
import type { TuiFixture } from './tui-fixture.ts';
import { quit, tuiFixture } from './tui-fixture.ts';
import { keys, pty } from './tui-terminal.ts';

let fixture: TuiFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function widest(lines: readonly string[]): number {
  return Math.max(...lines.map((line) => [...line.trimEnd()].length));
}

describe.skipIf(pty === undefined)('the TUI screen', () => {
  it('resizing while an answer streams re-lays everything out at the new width', async () => {
    const words = Array.from({ length: 120 }, (_, index) => `word${index} `);
    fixture = await tuiFixture([{ text: words, delayMs: 15 }]);
    const tui = fixture.start([], { cols: 100, rows: 30 });
    await tui.waitFor('Type a prompt');
    tui.type('stream please');
    tui.type(keys.enter);
    await tui.waitFor('word20');
    tui.resize(60, 20);
    await tui.waitFor('word60');
    tui.resize(80, 24);
    const done = await tui.waitFor('turn 1 · completed');
    expect(widest(tui.screen())).toBeLessThanOrEqual(80);
    expect(tui.screen()).toHaveLength(24);
    expect(done).toContain('word119');
    expect(done).toMatch(/deepseek\/deepseek-chat · ask/);
    tui.resize(60, 20);
    await tui.waitFor((text) => text.split('\n').every((line) => [...line.trimEnd()].length <= 60));
    expect(tui.text()).toContain('word119');
    await quit(tui);
  }, 120_000);

  it('a 10,000-line tool output stays bounded in its card, and the transcript scrolls', async () => {
    fixture = await tuiFixture([
      {
        toolCalls: [{ id: 'call_seq', name: 'bash', arguments: JSON.stringify({ command: 'seq 1 10000' }) }],
      },
      { text: 'Counted.' },
    ]);
    const tui = fixture.start(['--approve', 'yolo'], { cols: 80, rows: 24 });
    await tui.waitFor('Type a prompt');
    tui.type('count to 10000');
    tui.type(keys.enter);
    const done = await tui.waitFor('turn 1 · completed');
    expect(done).toMatch(/● bash \$ seq 1 10000 +✓ exit 0/);
    expect(done).toMatch(/│ … \d+ more lines/);
    expect(done).not.toContain('│ 9999');
    const cardLines = tui.screen().filter((line) => line.startsWith('  │'));
    expect(cardLines.length).toBeLessThanOrEqual(9);
    tui.type(keys.pageUp);
    const scrolled = await tui.waitFor('↓ more below');
    expect(scrolled).toContain('› count to 10000');
    tui.type(keys.end);
    const following = await tui.waitFor((text) => !text.includes('↓ more below'));
    expect(following).toContain('Counted.');
    await quit(tui);
  }, 120_000);

  it('--continue after a SIGKILL of the TUI opens the repaired session and goes on', async () => {
    fixture = await tuiFixture([
      { text: ['partial ', 'answer ', 'before ', 'the ', 'kill '], stallAfterEvents: 4 },
      { text: 'After the crash.' },
    ]);
    const first = fixture.start();
    await first.waitFor('Type a prompt');
    first.type('start something long');
    first.type(keys.enter);
    await first.waitFor('partial answer');
    const [id] = fixture.sessionIds();
    // The request's events reach the file within the batch window while the answer streams (a request
    // waits for no disk); the kill comes once they are there, mid-turn.
    while (!(await fixture.events(id!)).some((event) => event.type === 'assistant/chunk')) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    first.kill('SIGKILL');
    await first.exited();
    const second = fixture.start(['--continue']);
    const resumed = await second.waitFor(`Resumed session ${id!}`);
    expect(resumed).toContain('› start something long');
    expect(resumed).toMatch(/turn 1 · interrupted/);
    second.type('go on');
    second.type(keys.enter);
    const done = await second.waitFor('turn 2 · completed');
    expect(done).toContain('After the crash.');
    await quit(second);
    expect(fixture.sessionIds()).toEqual([id]);
    const types = (await fixture.events(id!)).map((event) => event.type);
    expect(types.filter((type) => type === 'turn/end')).toHaveLength(2);
  }, 120_000);

  it('bad input: a too-small terminal, a binary paste, an unknown command, an @path outside the workspace', async () => {
    fixture = await tuiFixture([{ text: 'Answered without the file.' }]);
    writeFileSync(join(fixture.box.root, 'secret.txt'), 'outside\n');
    const tui = fixture.start([], { cols: 80, rows: 24 });
    await tui.waitFor('Type a prompt');
    tui.type('draft text');
    tui.resize(30, 8);
    const small = await tui.waitFor('needs at least 40×10');
    expect(small).toContain('nothing is lost');
    tui.resize(80, 24);
    const back = await tui.waitFor('draft text');
    expect(back).toContain('Type a prompt');
    tui.type('\x15');
    tui.type(keys.paste('\x00\x01\x02binary\x00\x7f\x03\x04'));
    await tui.waitFor('The pasted data looks binary');
    tui.type('/nosuch thing');
    tui.type(keys.enter);
    const unknown = await tui.waitFor('Unknown command /nosuch');
    expect(unknown).toMatch(/─+\n {1}\/nosuch thing/);
    tui.type('\x15');
    tui.type('read @../secret.txt please');
    tui.type(keys.enter);
    const asking = await tui.waitFor('Allow @mention?');
    expect(asking).toMatch(/reason: @mention touches \S+secret\.txt, outside the\s+workspace/);
    tui.type('n');
    await tui.waitFor('Why not?');
    tui.type('not that file');
    tui.type(keys.enter);
    const refused = await tui.waitFor('turn 1 · completed');
    expect(refused).toContain('@../secret.txt was not attached — DENIED: not that file');
    expect(refused).toContain('Answered without the file.');
    const body = fixture.server.requests[0]!.body as { messages: { role: string; content: unknown }[] };
    expect(JSON.stringify(body.messages)).not.toContain('outside\\n');
    await quit(tui);
  }, 120_000);
});

describe.skipIf(pty === undefined)('images in the TUI', () => {
  it('an @image is attached when the model takes images, and refused with a reason when it does not', async () => {
    fixture = await tuiFixture([
      { text: 'A red pixel.' },
      { text: 'No image this time.' },
      { text: 'Still no image.' },
    ]);
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
      'base64',
    );
    writeFileSync(join(fixture.box.workspace, 'pixel.png'), png);
    // A model that takes images only up to 64 base64 characters, smaller than this one's.
    mkdirSync(fixture.box.home, { recursive: true });
    writeFileSync(
      join(fixture.box.home, 'config.json'),
      JSON.stringify({ models: { 'openai/gpt-4o-mini': { images: true, imageBytes: 64 } } }),
    );
    const tui = fixture.start(
      [],
      { cols: 100, rows: 30 },
      {
        OPENAI_API_KEY: 'sk-tui-test',
        OPENAI_BASE_URL: fixture.server.url,
        REIN_MODEL: 'openai/gpt-4o',
      },
    );
    await tui.waitFor('Type a prompt');
    tui.type('what is in @pixel.png');
    tui.type(keys.enter);
    const seen = await tui.waitFor('turn 1 · completed');
    expect(seen).toContain(`Attached pixel.png (${png.length} bytes).`);
    const first = JSON.stringify(fixture.server.requests[0]!.body);
    expect(first).toContain(`data:image/png;base64,${png.toString('base64')}`);
    tui.type('/model deepseek/deepseek-chat');
    tui.type(keys.enter);
    await tui.waitFor('Model: deepseek/deepseek-chat from the next request on.');
    tui.type('and now @pixel.png');
    tui.type(keys.enter);
    const refused = await tui.waitFor('turn 2 · completed');
    expect(refused).toMatch(
      /@pixel\.png was not attached — IMAGES_UNSUPPORTED: the model of the next request does not\s+take\s+images/,
    );
    const second = fixture.server.requests[1]!.body as { messages: { role: string; content: unknown }[] };
    expect(second.messages.at(-1)).toEqual({ role: 'user', content: 'and now @pixel.png' });
    tui.type('/model openai/gpt-4o-mini');
    tui.type(keys.enter);
    await tui.waitFor('Model: openai/gpt-4o-mini from the next request on.');
    tui.type('too large @pixel.png');
    tui.type(keys.enter);
    const tooLarge = await tui.waitFor('turn 3 · completed');
    expect(tooLarge).toMatch(
      /@pixel\.png was not attached — IMAGES_TOO_LARGE: the model of the next request takes images of up\s+to\s+64 B/,
    );
    const third = fixture.server.requests[2]!.body as { messages: { role: string; content: unknown }[] };
    expect(third.messages.at(-1)).toEqual({ role: 'user', content: 'too large @pixel.png' });
    await quit(tui);
  }, 120_000);
});

describe('rein without a terminal', () => {
  it('behaves as rein run: the prompt from stdin, the answer on stdout', async () => {
    fixture = await tuiFixture([]);
    const result = await runRein([], {
      cwd: fixture.box.workspace,
      env: fixture.box.env,
      input: 'what is this?',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Demo model');
    expect(result.stderr).toContain('⏺ read_file');
  }, 60_000);
});
