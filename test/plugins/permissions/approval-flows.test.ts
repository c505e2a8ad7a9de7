import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalDecision } from '../../../src/index.ts';
import { eventTypes, eventsOf, waitForEvent } from '../../../src/testing/index.ts';
import type { Sandbox } from '../../tools/support.ts';
import { sandbox } from '../../tools/support.ts';
import { loggedResults, permissionFixture } from './support.ts';
import { approvedToolTurnTypes } from '../../support/event-sequences.ts';

let box: Sandbox;
beforeEach(() => {
  box = sandbox('rein-approvals-');
});
afterEach(() => box.cleanup());

const write = (id: string, path = 'notes.txt', content = 'hello\n') => ({
  id,
  name: 'write_file',
  arguments: { path, content },
});
const bash = (id: string, command: string) => ({ id, name: 'bash', arguments: { command } });

function toolResultTexts(request: { messages: readonly { content: readonly unknown[] }[] }): string[] {
  return request.messages.flatMap((message) =>
    message.content
      .filter(
        (block): block is { type: 'tool-result'; content: { text: string }[] } =>
          (block as { type: string }).type === 'tool-result',
      )
      .map((block) => block.content.map((part) => part.text).join('')),
  );
}

describe('approval flows through a real agent', () => {
  it('ask → allow-once: the write runs after the human allows it, all of it on the log', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      responses: [{ toolCalls: [write('w1')] }, { text: 'written' }],
      approver: () => ({ decision: 'allow-once' }),
    });
    f.agent.followup('write the notes');
    await f.agent.whenIdle();
    expect(eventTypes(f.agent.session, { chunks: false })).toEqual(approvedToolTurnTypes);
    const [requested] = eventsOf<Record<string, unknown>>(f.agent.session, 'tool/approval-requested');
    expect(requested).toEqual({
      requestId: expect.any(String),
      turn: 1,
      step: 1,
      callId: 'w1',
      name: 'write_file',
      arguments: '{"path":"notes.txt","content":"hello\\n"}',
      reason: 'write_file touches notes.txt',
    });
    expect(eventsOf(f.agent.session, 'tool/approval-decided')).toEqual([
      { requestId: requested!.requestId, callId: 'w1', decision: 'allow-once' },
    ]);
    expect(loggedResults(f.agent)).toEqual([
      { callId: 'w1', text: 'Created notes.txt (1 lines, 6 bytes).', isError: false, code: undefined },
    ]);
    expect(readFileSync(join(box.workspace, 'notes.txt'), 'utf8')).toBe('hello\n');
    await f.harness.dispose();
  });

  it('allow-session (answered through the ApprovalService): the same call later runs without asking', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      responses: [
        { toolCalls: [bash('b1', 'echo first')] },
        { toolCalls: [bash('b2', 'echo first')] },
        { toolCalls: [bash('b3', 'echo other')] },
        { text: 'ok' },
      ],
      approver: () => undefined,
    });
    f.agent.followup('run it');
    await waitForEvent(f.agent.session, (event) => event.type === 'tool/approval-requested');
    const [pending] = f.harness.approvals.pending(f.agent.id);
    expect(pending).toMatchObject({ callId: 'b1', name: 'bash', reason: 'bash runs `echo first`' });
    expect(f.harness.approvals.answer(pending!.requestId, { decision: 'allow-session' })).toBe(true);
    await waitForEvent(
      f.agent.session,
      (event) =>
        event.type === 'tool/approval-requested' && (event.data as { callId: string }).callId === 'b3',
    );
    const [other] = f.harness.approvals.pending(f.agent.id);
    f.harness.approvals.answer(other!.requestId, { decision: 'deny' });
    await f.agent.whenIdle();
    expect(
      eventsOf<{ callId: string }>(f.agent.session, 'tool/approval-requested').map((data) => data.callId),
    ).toEqual(['b1', 'b3']);
    expect(
      eventsOf<{ decision: string }>(f.agent.session, 'tool/approval-decided').map((data) => data.decision),
    ).toEqual(['allow-session', 'deny']);
    expect(loggedResults(f.agent).map(({ callId, text, code }) => ({ callId, text, code }))).toEqual([
      { callId: 'b1', text: 'first\n[exit code 0]', code: undefined },
      { callId: 'b2', text: 'first\n[exit code 0]', code: undefined },
      { callId: 'b3', text: 'Error: the user denied bash', code: 'TOOL_DENIED' },
    ]);
    await f.harness.dispose();
  });

  it('deny with a reason: the model’s next request carries the reason', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      responses: [{ toolCalls: [write('w1')] }, { text: 'understood' }],
      approver: () => ({ decision: 'deny', reason: 'write to drafts/ instead' }),
    });
    f.agent.followup('write the notes');
    await f.agent.whenIdle();
    expect(eventsOf(f.agent.session, 'tool/approval-decided')).toEqual([
      { requestId: expect.any(String), callId: 'w1', decision: 'deny', reason: 'write to drafts/ instead' },
    ]);
    expect(toolResultTexts(f.model.requests[1]!)).toEqual([
      'Error: the user denied write_file: write to drafts/ instead',
    ]);
    expect(existsSync(join(box.workspace, 'notes.txt'))).toBe(false);
    await f.harness.dispose();
  });

  it('Stop during the wait resolves the request as aborted and the call gets its aborted result', async () => {
    let heardAbort = false;
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      responses: [{ toolCalls: [write('w1')] }],
      approver: (_request, signal) =>
        new Promise<ApprovalDecision>(() => {
          signal.addEventListener('abort', () => {
            heardAbort = true;
          });
        }),
    });
    f.agent.followup('write the notes');
    await waitForEvent(f.agent.session, (event) => event.type === 'tool/approval-requested');
    expect(f.agent.status).toBe('running');
    f.agent.cancel({ kind: 'user' });
    await f.agent.whenIdle();
    expect(heardAbort).toBe(true);
    expect(f.harness.approvals.pending()).toEqual([]);
    expect(eventTypes(f.agent.session, { chunks: false }).slice(-7)).toEqual([
      'tool/call',
      'tool/approval-requested',
      'agent/cancelled',
      'tool/approval-decided',
      'tool/result',
      'step/end',
      'turn/end',
    ]);
    expect(eventsOf<{ decision: string }>(f.agent.session, 'tool/approval-decided')).toMatchObject([
      { decision: 'aborted' },
    ]);
    expect(loggedResults(f.agent)).toEqual([
      {
        callId: 'w1',
        text: 'Error: tool call aborted before dispatch',
        isError: true,
        code: 'ABORTED_BEFORE_DISPATCH',
      },
    ]);
    expect(eventsOf(f.agent.session, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(existsSync(join(box.workspace, 'notes.txt'))).toBe(false);
    await f.harness.dispose();
  });

  it('no approver attached: the call is denied (fail closed), never run', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      responses: [{ toolCalls: [write('w1')] }, { text: 'ok' }],
    });
    f.agent.followup('write the notes');
    await f.agent.whenIdle();
    expect(eventsOf<{ decision: string }>(f.agent.session, 'tool/approval-decided')).toMatchObject([
      { decision: 'deny' },
    ]);
    expect(loggedResults(f.agent)).toEqual([
      {
        callId: 'w1',
        text: expect.stringMatching(
          /^Error: write_file needs approval \(.+\) and no approver is attached, so it was denied$/,
        ),
        isError: true,
        code: 'TOOL_DENIED',
      },
    ]);
    expect(existsSync(join(box.workspace, 'notes.txt'))).toBe(false);
    await f.harness.dispose();
  });
});

describe('modes, rules and the workspace boundary', () => {
  it('an approved outside read is granted to the tool; the same read without approval shows nothing', async () => {
    writeFileSync(join(box.outside, 'data.txt'), 'outside data\n');
    const path = join(box.outside, 'data.txt');
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      responses: [
        { toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path } }] },
        { toolCalls: [{ id: 'r2', name: 'read_file', arguments: { path } }] },
        { text: 'ok' },
      ],
      approver: (request) => (request.callId === 'r1' ? { decision: 'allow-once' } : { decision: 'deny' }),
    });
    f.agent.followup('read it twice');
    await f.agent.whenIdle();
    expect(f.asked.map((request) => [request.callId, request.reason])).toEqual([
      ['r1', `read_file touches ${path}, outside the workspace`],
      ['r2', `read_file touches ${path}, outside the workspace`],
    ]);
    expect(loggedResults(f.agent).map(({ callId, text }) => ({ callId, text }))).toEqual([
      { callId: 'r1', text: '     1\toutside data' },
      { callId: 'r2', text: 'Error: the user denied read_file' },
    ]);
    await f.harness.dispose();
  });

  it('auto-edit writes inside unasked, asks for bash, denies outside writes without a rule', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'auto-edit',
      rules: [{ decision: 'allow', tool: 'write_file', path: `${box.outside}/allowed/**` }],
      responses: [
        {
          toolCalls: [
            write('inside'),
            bash('b', 'ls'),
            write('outside', join(box.outside, 'x.txt')),
            write('ruled', join(box.outside, 'allowed/y.txt')),
            write('git', '.git/config'),
          ],
        },
        { text: 'ok' },
      ],
      approver: () => ({ decision: 'deny' }),
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(f.asked.map((request) => request.callId)).toEqual(['b']);
    const results = Object.fromEntries(loggedResults(f.agent).map((result) => [result.callId, result]));
    expect(results.inside).toMatchObject({ isError: false });
    expect(results.b).toMatchObject({ code: 'TOOL_DENIED' });
    expect(results.outside).toMatchObject({
      code: 'TOOL_DENIED',
      text: `Error: write_file may not write ${join(box.outside, 'x.txt')}: it is outside the workspace and no allow rule permits it`,
    });
    expect(results.ruled).toMatchObject({ isError: false });
    expect(readFileSync(join(box.outside, 'allowed/y.txt'), 'utf8')).toBe('hello\n');
    expect(results.git).toMatchObject({
      code: 'TOOL_DENIED',
      text: 'Error: write_file may not change .git/config: it is protected',
    });
    expect(existsSync(join(box.outside, 'x.txt'))).toBe(false);
    await f.harness.dispose();
  });

  it('read-only denies mutations; yolo runs everything but protected writes; deny rules beat allow rules', async () => {
    mkdirSync(join(box.workspace, '.git'));
    const readOnly = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'read-only',
      responses: [
        { toolCalls: [write('w'), bash('b', 'ls'), { id: 'l', name: 'list_dir', arguments: {} }] },
        { text: 'ok' },
      ],
    });
    readOnly.agent.followup('go');
    await readOnly.agent.whenIdle();
    expect(loggedResults(readOnly.agent).map((result) => [result.callId, result.code])).toEqual([
      ['w', 'TOOL_DENIED'],
      ['b', 'TOOL_DENIED'],
      ['l', undefined],
    ]);
    await readOnly.harness.dispose();

    const yolo = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'yolo',
      rules: [
        { decision: 'allow', tool: 'bash', command: 'rm*' },
        { decision: 'deny', tool: 'bash', command: 'rm -rf*', reason: 'no recursive deletes' },
      ],
      responses: [
        {
          toolCalls: [
            bash('ok', 'echo fine'),
            bash('rm', 'echo x && rm -rf build'),
            write('git', '.git/HEAD'),
            { id: 'out', name: 'read_file', arguments: { path: join(box.outside) } },
          ],
        },
        { text: 'ok' },
      ],
    });
    yolo.agent.followup('go');
    await yolo.agent.whenIdle();
    expect(yolo.asked).toEqual([]);
    expect(loggedResults(yolo.agent).map((result) => [result.callId, result.code, result.text])).toEqual([
      ['ok', undefined, 'fine\n[exit code 0]'],
      ['rm', 'TOOL_DENIED', 'Error: no recursive deletes'],
      ['git', 'TOOL_DENIED', 'Error: write_file may not change .git/HEAD: it is protected'],
      ['out', 'IS_A_DIRECTORY', `Error: ${box.outside} is a directory; use list_dir to see its entries`],
    ]);
    await yolo.harness.dispose();
  });

  it('allowed command prefixes run unasked only when every part of a compound command is allowed', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      rules: [
        { decision: 'allow', tool: 'bash', command: 'echo*' },
        { decision: 'allow', tool: 'bash', command: 'pwd' },
      ],
      responses: [
        {
          toolCalls: [
            bash('both', 'echo a && pwd'),
            bash('piped', 'echo a | wc -c'),
            bash('subst', 'echo $(whoami)'),
            bash('redirect', 'echo a > out.txt'),
          ],
        },
        { text: 'ok' },
      ],
      approver: () => ({ decision: 'deny' }),
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    expect(f.asked.map((request) => request.callId)).toEqual(['piped', 'subst', 'redirect']);
    expect(loggedResults(f.agent)[0]).toMatchObject({
      callId: 'both',
      text: `a\n${box.workspace}\n[exit code 0]`,
    });
    expect(existsSync(join(box.workspace, 'out.txt'))).toBe(false);
    await f.harness.dispose();
  });

  it('spilled output is readable without approval, but never writable', async () => {
    const f = await permissionFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'ask',
      rules: [{ decision: 'allow', tool: 'bash', command: 'seq *' }],
      responses: [
        { toolCalls: [bash('b', 'seq 1 20000')] },
        (request) => {
          const text = toolResultTexts(request).at(-1)!;
          const file = /saved in (\S+) \.\.\.\]/.exec(text)![1]!;
          return {
            toolCalls: [
              { id: 'r', name: 'read_file', arguments: { path: file, offset: 19999 } },
              { id: 'w', name: 'write_file', arguments: { path: file, content: 'tampered' } },
            ],
          };
        },
        { text: 'ok' },
      ],
      approver: () => ({ decision: 'allow-once' }),
    });
    f.agent.followup('count');
    await f.agent.whenIdle();
    expect(f.asked).toEqual([]);
    const results = loggedResults(f.agent);
    expect(results[1]).toMatchObject({ callId: 'r', text: ' 19999\t19999\n 20000\t20000', isError: false });
    expect(results[2]).toMatchObject({
      callId: 'w',
      code: 'TOOL_DENIED',
      text: expect.stringContaining('it is protected'),
    });
    await f.harness.dispose();
  });
});
