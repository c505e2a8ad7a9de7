import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AssistantMessage } from '../../src/index.ts';
import {
  createReinHarness,
  messageText,
  outlineDocument,
  pickDemoFile,
  stripLineNumbers,
} from '../../src/internal.ts';
import { eventTypes, eventsOf } from '../../src/testing/index.ts';

const root = mkdtempSync(join(tmpdir(), 'rein-demo-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function directory(name: string, files: Record<string, string | Buffer>): string {
  const path = join(root, name);
  mkdirSync(path, { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(join(path, file), content);
  return path;
}

describe('the demo model’s local summary', () => {
  it('outlines ATX and setext headings outside code fences and keeps the first paragraph', () => {
    const text = [
      'Title',
      '=====',
      '',
      'The first paragraph',
      'continues here.',
      '',
      '```',
      '# not a heading',
      '```',
      '',
      '## Part one ##',
      'Sub',
      '---',
      '#### Deep',
    ].join('\n');
    expect(outlineDocument(text)).toEqual({
      lines: 14,
      headings: [
        { level: 1, text: 'Title' },
        { level: 2, text: 'Part one' },
        { level: 2, text: 'Sub' },
        { level: 4, text: 'Deep' },
      ],
      firstParagraph: 'The first paragraph continues here.',
    });
  });

  it('strips read_file’s line gutter and its notes, but leaves numbered documents alone', () => {
    expect(stripLineNumbers('     1\t# A\n     2\t\n     3\ttext\n(2 more lines: use offset 4)')).toBe(
      '# A\n\ntext',
    );
    expect(stripLineNumbers('1. first\n2. second')).toBe('1. first\n2. second');
  });

  it('picks the README, else the first non-hidden text file, else nothing', async () => {
    expect(await pickDemoFile(directory('with-readme', { 'a.txt': 'a', 'README.md': '# R' }))).toBe(
      'README.md',
    );
    expect(
      await pickDemoFile(
        directory('no-readme', {
          '.hidden': 'h',
          'a.bin': Buffer.from([0, 1, 2]),
          'b.md': '# B',
          'c.txt': 'c',
        }),
      ),
    ).toBe('b.md');
    expect(await pickDemoFile(directory('empty', {}))).toBeUndefined();
  });
});

describe('the demo model through the app harness (the seed’s running example)', () => {
  it('reads the first text file with read_file, then summarizes what the tool returned, in one turn of two steps', async () => {
    const workspace = directory('project', { 'notes.md': '# Notes\n\nSome notes.\n\n## Todo\n' });
    const harness = await createReinHarness({
      cwd: workspace,
      home: join(root, 'home'),
      env: { REIN_DEMO_DELAY_MS: '0' },
    });
    try {
      expect(harness.usingDemo).toBe(true);
      expect(harness.notices[0]).toContain('offline demo model demo/running-example');
      expect(harness.llm.adapter('demo')?.describeModel?.('running-example')).toMatchObject({ demo: true });
      const agent = await harness.createAgent({ cwd: workspace });
      agent.followup('what is here?');
      await agent.whenIdle();
      expect(eventTypes(agent.session, { chunks: false })).toEqual([
        'agent/inbox/spliced',
        'turn/start',
        'agent/inbox/spliced',
        'step/start',
        'user/message',
        'request/header',
        'request/context',
        'assistant/message',
        'tool/call',
        'tool/result',
        'step/end',
        'step/start',
        'assistant/message',
        'step/end',
        'turn/end',
      ]);
      const calls = eventsOf<{ name: string; arguments: string }>(agent.session, 'tool/call');
      expect(calls.map((call) => [call.name, call.arguments])).toEqual([
        ['read_file', '{"path":"notes.md"}'],
      ]);
      const answers = eventsOf<{ message: AssistantMessage }>(agent.session, 'assistant/message');
      const summary = messageText(answers[1]!.message);
      expect(summary).toContain('Demo model (offline, scripted');
      expect(summary).toContain('`notes.md` has 5 lines and 2 headings. Its outline:\n\n- Notes\n  - Todo');
      expect(summary).toContain('It opens with: “Some notes.”');
    } finally {
      await harness.dispose();
    }
  });

  it('says there is nothing to read in a directory without text files, and calls no tool', async () => {
    const workspace = directory('bare', {});
    const harness = await createReinHarness({
      cwd: workspace,
      home: join(root, 'home'),
      env: { REIN_DEMO_DELAY_MS: '0' },
    });
    try {
      const agent = await harness.createAgent({ cwd: workspace });
      agent.followup('anything?');
      await agent.whenIdle();
      expect(eventsOf(agent.session, 'tool/call')).toEqual([]);
      const [answer] = eventsOf<{ message: AssistantMessage }>(agent.session, 'assistant/message');
      expect(messageText(answer!.message)).toContain('has no readable text file');
    } finally {
      await harness.dispose();
    }
  });
});
