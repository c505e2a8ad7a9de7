import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/index.ts';
import type { CliIo } from '../../src/cli/cli-io.ts';
import { TerminalApprover } from '../../src/cli/terminal-approver.ts';

function terminal(): {
  io: CliIo;
  type(text: string): void;
  waitFor(text: string): Promise<void>;
  shown(): string;
} {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
  let shown = '';
  const waiters: { text: string; resolve: () => void; from: number }[] = [];
  output.setEncoding('utf8').on('data', (text: string) => {
    shown += text;
    for (const waiter of waiters.splice(0)) {
      if (shown.indexOf(waiter.text, waiter.from) >= 0) waiter.resolve();
      else waiters.push(waiter);
    }
  });
  let mark = 0;
  return {
    io: { stdin: input, stdout: output, stderr: output, env: {}, cwd: '/' },
    type: (text) => {
      mark = shown.length;
      input.write(text);
    },
    waitFor: (text) =>
      new Promise((resolve) => {
        if (shown.indexOf(text, mark) >= 0) resolve();
        else waiters.push({ text, resolve, from: mark });
      }),
    shown: () => shown,
  };
}

const request = (callId: string): ApprovalRequest => ({
  requestId: `request-${callId}`,
  sessionId: 'main',
  turn: 1,
  step: 1,
  callId,
  name: 'write_file',
  arguments: JSON.stringify({ path: 'notes.txt', content: 'hi' }),
  reason: 'writes a file',
});

const prompt = '[y] allow once  [a] allow for this session  [n] deny  > ';

describe('the terminal approval prompt', () => {
  it('allow once, allow for the session, deny with a reason — one question at a time', async () => {
    const term = terminal();
    const approver = new TerminalApprover({ io: term.io, mainSession: 'main' });
    const signal = new AbortController().signal;
    const first = approver.notify(request('c1'), signal);
    const second = approver.notify(request('c2'), signal);
    const third = approver.notify(request('c3'), signal);
    await term.waitFor(prompt);
    expect(term.shown()).toContain('? write_file needs your approval');
    expect(term.shown()).toContain('arguments: {"path":"notes.txt","content":"hi"}');
    expect(term.shown()).toContain('reason:    writes a file');
    term.type('y\n');
    expect(await first).toEqual({ decision: 'allow-once' });
    await term.waitFor(prompt);
    term.type('maybe\n');
    await term.waitFor('please answer y, a or n');
    term.type('a\n');
    expect(await second).toEqual({ decision: 'allow-session' });
    await term.waitFor(prompt);
    term.type('n\n');
    await term.waitFor('reason for the model (optional): ');
    term.type('not in this repo\n');
    expect(await third).toEqual({ decision: 'deny', reason: 'not in this repo' });
  });

  it('an empty answer does not allow; cancelling while asking resolves aborted', async () => {
    const term = terminal();
    const approver = new TerminalApprover({ io: term.io, mainSession: 'main' });
    const controller = new AbortController();
    const pending = approver.notify(request('c4'), controller.signal);
    await term.waitFor(prompt);
    term.type('\n');
    await term.waitFor('please answer y, a or n');
    controller.abort();
    expect(await pending).toEqual({ decision: 'aborted' });
  });

  it('shows the diff a file change would make instead of the escaped arguments', async () => {
    const term = terminal();
    const approver = new TerminalApprover({ io: term.io, mainSession: 'main' });
    const decision = approver.notify(
      {
        ...request('c9'),
        name: 'edit_file',
        arguments: JSON.stringify({ path: 'notes.md', old_string: 'beta', new_string: 'gamma "q"\nmore' }),
        preview: {
          path: 'notes.md',
          created: false,
          diff: 'Index: notes.md\n===================================================================\n--- notes.md\n+++ notes.md\n@@ -1,2 +1,3 @@\n alpha\n-beta\n+gamma "q"\n+more\n',
        },
      },
      new AbortController().signal,
    );
    await term.waitFor(prompt);
    const shown = term.shown();
    expect(shown).toContain('changes to notes.md:');
    expect(shown).toContain('\x1b[31m-beta\x1b[0m');
    expect(shown).toContain('\x1b[32m+gamma "q"\x1b[0m');
    expect(shown).not.toContain('arguments:');
    expect(shown).not.toContain('\\n');
    expect(shown).not.toContain('Index:');
    term.type('y\n');
    expect(await decision).toEqual({ decision: 'allow-once' });
  });
});
