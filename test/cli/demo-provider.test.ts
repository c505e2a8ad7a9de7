import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent, ApprovalDecision, ApprovalRequest, AssistantMessage } from '../../src/index.ts';
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
  it('plays the running example in the default mode: read, a shell count that asks for approval, then the summary: one turn, three steps', async () => {
    const workspace = directory('project', { 'notes.md': '# Notes\n\nSome notes.\n\n## Todo\n' });
    const harness = await createReinHarness({
      cwd: workspace,
      home: join(root, 'home'),
      env: { REIN_DEMO_DELAY_MS: '0' },
    });
    const asked: ApprovalRequest[] = [];
    const detach = harness.approvals.attach({
      notify: (request) => {
        asked.push(request);
        return Promise.resolve({ decision: 'allow-once' });
      },
    });
    try {
      expect(harness.usingDemo).toBe(true);
      expect(harness.approvalMode).toBe('ask');
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
        'tool/call',
        'tool/approval-requested',
        'tool/approval-decided',
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
        ['bash', '{"command":"wc -l -w notes.md"}'],
      ]);
      // Only the shell command asked: reads inside the workspace run freely in the default mode.
      expect(asked.map((request) => request.name)).toEqual(['bash']);
      expect(asked[0]!.reason).toBeTruthy();
      const answers = eventsOf<{ message: AssistantMessage }>(agent.session, 'assistant/message');
      const summary = messageText(answers[2]!.message);
      expect(summary).toContain('Demo model (offline, scripted');
      expect(summary).toContain('`notes.md` has 5 lines and 2 headings. Its outline:\n\n- Notes\n  - Todo');
      expect(summary).toContain('It opens with: “Some notes.”');
      expect(summary).toContain('`wc` counts 5 lines and 6 words.');
      expect(eventsOf(agent.session, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    } finally {
      detach();
      await harness.dispose();
    }
  });

  it('after Stop during the approval, a new prompt is answered afresh, not with the stopped call', async () => {
    const workspace = directory('stopped', { 'README.md': '# Stopped\n\nText.\n' });
    const harness = await createReinHarness({
      cwd: workspace,
      home: join(root, 'home'),
      env: { REIN_DEMO_DELAY_MS: '0' },
    });
    let agentRef: Agent | undefined;
    let answerNext: ApprovalDecision | undefined;
    const detach = harness.approvals.attach({
      notify: () => {
        if (answerNext !== undefined) return Promise.resolve(answerNext);
        // Stop while the dialog is open, as a user pressing Stop would.
        agentRef!.cancel({ kind: 'user' });
        return undefined;
      },
    });
    try {
      const agent = await harness.createAgent({ cwd: workspace });
      agentRef = agent;
      agent.followup('summarize');
      await agent.whenIdle();
      expect(eventsOf(agent.session, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
      answerNext = { decision: 'deny', reason: 'not now' };
      agent.followup('and now?');
      await agent.whenIdle();
      const turnTwo = agent.session.log
        .slice(0)
        .filter((event) => (event.data as { turn?: number }).turn === 2);
      const calls = turnTwo.filter((event) => event.type === 'tool/call');
      // The new prompt starts the example over with the read, instead of reporting the aborted call.
      expect(calls.map((event) => (event.data as { name: string }).name)).toEqual(['read_file', 'bash']);
      const answers = eventsOf<{ message: AssistantMessage; turn: number }>(
        agent.session,
        'assistant/message',
      );
      const last = messageText(answers.at(-1)!.message);
      expect(last).toContain('Summary of `README.md`');
      expect(last).not.toContain('aborted');
      expect(last).toContain('I did not get the word count (`wc`)');
      expect(eventsOf(agent.session, 'turn/end').at(-1)).toEqual({ turn: 2, reason: { kind: 'completed' } });
    } finally {
      detach();
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
