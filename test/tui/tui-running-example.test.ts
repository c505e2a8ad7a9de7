import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TuiFixture } from './tui-fixture.ts';
import { quit, tuiFixture } from './tui-fixture.ts';
import { keys, pty } from './tui-terminal.ts';
import { approvedToolTurnTypes } from '../support/event-sequences.ts';

let fixture: TuiFixture;

const summary = [
  '## Summary',
  '',
  'The notes say **hello** and list:',
  '',
  '- one thing',
  '- another thing',
  '',
  '| file | lines |',
  '| ---- | ----- |',
  '| notes.md | 2 |',
  '',
  '```js',
  'const answer = 42;',
  '```',
].join('\n');

beforeAll(async () => {
  fixture = await tuiFixture([
    {
      text: "I'll read the notes first.",
      toolCalls: [
        { id: 'call_read_1', name: 'read_file', arguments: JSON.stringify({ path: '../notes.md' }) },
      ],
    },
    { text: summary.match(/[\s\S]{1,6}/g)!, delayMs: 5 },
  ]);
  writeFileSync(join(fixture.box.root, 'notes.md'), 'hello\nworld\n');
});

afterAll(() => fixture.close());

describe.skipIf(pty === undefined)('the TUI plays the running example', () => {
  it('prompt → read → approval with its reason → allow → streamed summary → idle', async () => {
    const tui = fixture.start();
    await tui.waitFor('Type a prompt and press Enter');
    expect(tui.text()).toContain('deepseek/deepseek-chat · ask');
    tui.type('summarize ../notes.md');
    tui.type(keys.enter);
    const asking = await tui.waitFor('Allow read_file?');
    expect(asking).toMatch(/reason: read_file .*outside the workspace/);
    expect(asking).toContain(
      '[y] allow once  [a] allow for this session  [n] deny with a reason  [Esc] stop',
    );
    expect(asking).toContain('"path": "../notes.md"');
    expect(asking).toContain('needs approval');
    tui.type('y');
    const done = await tui.waitFor((text) => text.includes('turn 1 · completed') && text.includes('idle'));
    expect(done).toContain('› summarize ../notes.md');
    expect(done).toMatch(/● read_file \.\.\/notes\.md +✓ done/);
    expect(done).toContain('│      1  hello');
    expect(done).toContain('Summary');
    expect(done).toContain('The notes say hello and list:');
    expect(done).toMatch(/- one thing/);
    expect(done).toMatch(/file +│ +lines/);
    expect(done).toContain('const answer = 42;');
    expect(done).not.toContain('## Summary');
    expect(done).not.toContain('**hello**');
    const [id] = fixture.sessionIds();
    await quit(tui);
    const types = (await fixture.events(id!))
      .map((event) => event.type)
      .filter((type) => type !== 'assistant/chunk');
    expect(types).toEqual(approvedToolTurnTypes);
    const decided = (await fixture.events(id!)).find((event) => event.type === 'tool/approval-decided');
    expect(decided?.data).toMatchObject({ decision: 'allow-once' });
  }, 90_000);
});
