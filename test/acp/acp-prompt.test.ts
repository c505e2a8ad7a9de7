import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { methods } from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeReply, FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from '../cli/rein-process.ts';
import { parseJsonLines, runRein, sandbox } from '../cli/rein-process.ts';
import type { AcpClient, AcpClientOptions } from './acp-client.ts';
import { chunkText, startAcp, updateKinds } from './acp-client.ts';

let box: Sandbox | undefined;
let server: FakeServer | undefined;
let acp: AcpClient | undefined;

afterEach(async () => {
  await acp?.close();
  await server?.close();
  box?.cleanup();
  acp = undefined;
  server = undefined;
  box = undefined;
});

/** A sandbox, a fake vendor playing `replies` (written knowing the sandbox), `rein acp` and one new session. */
async function setUp(
  replies: (sandboxed: Sandbox) => FakeReply[],
  options: Omit<AcpClientOptions, 'cwd'> = {},
): Promise<{ box: Sandbox; acp: AcpClient; sessionId: string }> {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  server = await startFakeOpenAIServer(replies(box));
  acp = await startAcp({
    ...options,
    cwd: box.workspace,
    env: { ...box.env, DEEPSEEK_API_KEY: 'sk-acp-test', DEEPSEEK_BASE_URL: server.url, ...options.env },
  });
  const created = await acp.agent.request(methods.agent.session.new, { cwd: box.workspace, mcpServers: [] });
  return { box, acp, sessionId: created.sessionId };
}

async function durableLog(sandboxed: Sandbox, sessionId: string): Promise<{ type: string; data: unknown }[]> {
  const shown = await runRein(['show', '--json', sessionId], {
    cwd: sandboxed.workspace,
    env: sandboxed.env,
  });
  expect(shown.code).toBe(0);
  return parseJsonLines(shown.stdout).durable;
}

describe('rein acp: prompts', () => {
  it("plays the seed's running example: read call, permission, allow, streamed summary, end_turn", async () => {
    // The notes live beside the workspace: reading outside it asks first, even in the ask mode.
    const notesOf = (sandboxed: Sandbox): string => join(sandboxed.root, 'notes.md');
    const { box: setupBox, sessionId } = await setUp((sandboxed) => [
      {
        text: "I'll read the notes.",
        toolCalls: [
          {
            id: 'call_read_1',
            name: 'read_file',
            arguments: JSON.stringify({ path: notesOf(sandboxed) }),
            pieces: 3,
          },
        ],
      },
      { text: ['The notes ', 'say ', 'hello.'] },
    ]);
    const notes = notesOf(setupBox);
    writeFileSync(notes, '# Notes\nhello\n');
    const setup = { box: setupBox };

    const answer = await acp!.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'Summarize the notes next door.' }],
    });

    expect(answer.stopReason).toBe('end_turn');
    const updates = acp!.updatesOf(sessionId);
    expect(updateKinds(updates)).toEqual([
      'agent_message_chunk',
      'tool_call',
      'tool_call_update:in_progress',
      'tool_call_update:completed',
      'agent_message_chunk',
    ]);
    const call = updates.find((update) => update.sessionUpdate === 'tool_call');
    expect(call).toMatchObject({
      toolCallId: 'call_read_1',
      kind: 'read',
      status: 'pending',
      locations: [{ path: notes }],
      rawInput: { path: notes },
    });
    expect(acp!.permissions).toHaveLength(1);
    const permission = acp!.permissions[0]!;
    expect(permission.sessionId).toBe(sessionId);
    expect(permission.toolCall).toMatchObject({ toolCallId: 'call_read_1', kind: 'read' });
    expect(permission.options.map((option) => option.kind)).toEqual([
      'allow_once',
      'allow_always',
      'reject_once',
      'reject_always',
    ]);
    const done = updates.find(
      (update) => update.sessionUpdate === 'tool_call_update' && update.status === 'completed',
    );
    expect(JSON.stringify(done)).toContain('hello');
    expect(chunkText(updates, 'agent_message_chunk')).toBe("I'll read the notes.The notes say hello.");

    const log = await durableLog(setup.box, sessionId);
    const types = log.map((event) => event.type);
    expect(types.filter((type) => type.startsWith('tool/'))).toEqual([
      'tool/call',
      'tool/approval-requested',
      'tool/approval-decided',
      'tool/result',
    ]);
    expect(log.find((event) => event.type === 'tool/approval-decided')!.data).toMatchObject({
      callId: 'call_read_1',
      decision: 'allow-once',
    });
    expect(log.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'completed' } } });
  });

  it('cancel during a permission request answers cancelled, every call gets its result, and a later prompt works', async () => {
    let release: ((response: RequestPermissionResponse) => void) | undefined;
    const setup = await setUp(
      () => [
        {
          toolCalls: [
            {
              id: 'call_write_1',
              name: 'write_file',
              arguments: JSON.stringify({ path: 'a.txt', content: 'a\n' }),
            },
            {
              id: 'call_write_2',
              name: 'write_file',
              arguments: JSON.stringify({ path: 'b.txt', content: 'b\n' }),
            },
          ],
        },
        { text: 'Back again.' },
      ],
      {
        onPermission: () =>
          new Promise<RequestPermissionResponse>((resolve) => {
            release = resolve;
          }),
      },
    );
    const { sessionId } = setup;
    const answer = acp!.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'write two files' }],
    });
    await expect.poll(() => acp!.permissions.length, { timeout: 20_000 }).toBe(1);
    await acp!.agent.notify(methods.agent.session.cancel, { sessionId });
    // As the protocol asks, the client answers its open permission request with `cancelled`.
    release!({ outcome: { outcome: 'cancelled' } });
    expect((await answer).stopReason).toBe('cancelled');
    expect(existsSync(join(setup.box.workspace, 'a.txt'))).toBe(false);
    expect(existsSync(join(setup.box.workspace, 'b.txt'))).toBe(false);
    const results = acp!
      .updatesOf(sessionId)
      .filter((update) => update.sessionUpdate === 'tool_call_update' && update.status === 'failed')
      .map((update) => (update as { toolCallId: string }).toolCallId)
      .sort();
    expect(results).toEqual(['call_write_1', 'call_write_2']);

    const again = await acp!.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'are you there?' }],
    });
    expect(again.stopReason).toBe('end_turn');
    expect(chunkText(acp!.updatesOf(sessionId), 'agent_message_chunk')).toBe('Back again.');

    const log = await durableLog(setup.box, sessionId);
    expect(log.filter((event) => event.type === 'agent/cancelled').map((event) => event.data)).toEqual([
      { cause: { kind: 'user' } },
    ]);
    const calls = log
      .filter((event) => event.type === 'tool/call')
      .map((event) => (event.data as { callId: string }).callId);
    const answered = log
      .filter((event) => event.type === 'tool/result')
      .map((event) => (event.data as { message: { source: { callId: string } } }).message.source.callId);
    expect(answered.sort()).toEqual(calls.sort());
    expect(
      log
        .filter((event) => event.type === 'turn/end')
        .map((event) => (event.data as { reason: unknown }).reason),
    ).toEqual([{ kind: 'aborted' }, { kind: 'completed' }]);
  });

  it('with the editor offering fs, the file tools read its buffer and write through it, in the mode the editor picked', async () => {
    const writes: { path: string; content: string }[] = [];
    const setup = await setUp(
      () => [
        {
          toolCalls: [{ id: 'call_read', name: 'read_file', arguments: JSON.stringify({ path: 'src.txt' }) }],
        },
        {
          toolCalls: [
            {
              id: 'call_write',
              name: 'write_file',
              arguments: JSON.stringify({ path: 'out.txt', content: 'from the model\n' }),
            },
          ],
        },
        { text: 'Done.' },
      ],
      {
        capabilities: { fs: { readTextFile: true, writeTextFile: true } },
        onReadTextFile: (path) => (path.endsWith('src.txt') ? 'editor buffer\n' : ''),
        onWriteTextFile: (path, content) => writes.push({ path, content }),
      },
    );
    const { sessionId } = setup;
    const workspace = setup.box.workspace;
    writeFileSync(join(workspace, 'src.txt'), 'disk text\n');
    await acp!.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'auto-edit' });

    const answer = await acp!.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'copy it' }],
    });

    expect(answer.stopReason).toBe('end_turn');
    expect(acp!.permissions).toEqual([]);
    const updates = acp!.updatesOf(sessionId);
    const read = updates.find(
      (update) =>
        update.sessionUpdate === 'tool_call_update' &&
        update.toolCallId === 'call_read' &&
        update.status === 'completed',
    );
    expect(JSON.stringify(read)).toContain('editor buffer');
    expect(JSON.stringify(read)).not.toContain('disk text');
    expect(writes).toEqual([{ path: join(workspace, 'out.txt'), content: 'from the model\n' }]);
    expect(existsSync(join(workspace, 'out.txt'))).toBe(false);
    expect(readFileSync(join(workspace, 'src.txt'), 'utf8')).toBe('disk text\n');
    const diff = { type: 'diff', path: join(workspace, 'out.txt'), newText: 'from the model\n' };
    expect(
      updates.find((update) => update.sessionUpdate === 'tool_call' && update.toolCallId === 'call_write'),
    ).toMatchObject({
      kind: 'edit',
      locations: [{ path: join(workspace, 'out.txt') }],
      content: [diff],
    });
    expect(
      updates.find(
        (update) =>
          update.sessionUpdate === 'tool_call_update' &&
          update.toolCallId === 'call_write' &&
          update.status === 'completed',
      ),
    ).toMatchObject({ content: [diff] });
    const log = await durableLog(setup.box, sessionId);
    expect(log.filter((event) => event.type === 'permissions/mode').map((event) => event.data)).toEqual([
      { mode: 'auto-edit' },
    ]);
    expect(log.some((event) => event.type === 'tool/approval-requested')).toBe(false);
  });

  it('reject always denies identical calls for the rest of the session without asking again', async () => {
    const write = { name: 'write_file', arguments: JSON.stringify({ path: 'x.txt', content: 'x\n' }) };
    const setup = await setUp(
      () => [
        { toolCalls: [{ id: 'call_1', ...write }] },
        { toolCalls: [{ id: 'call_2', ...write }] },
        { text: 'I will stop trying.' },
      ],
      { onPermission: () => ({ outcome: { outcome: 'selected', optionId: 'deny-session' } }) },
    );
    const { sessionId } = setup;
    const answer = await acp!.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'write x' }],
    });
    expect(answer.stopReason).toBe('end_turn');
    expect(acp!.permissions).toHaveLength(1);
    expect(existsSync(join(setup.box.workspace, 'x.txt'))).toBe(false);
    const log = await durableLog(setup.box, sessionId);
    expect(log.filter((event) => event.type === 'tool/approval-decided').map((event) => event.data)).toEqual([
      expect.objectContaining({ callId: 'call_1', decision: 'deny-session' }),
    ]);
    const results = log
      .filter((event) => event.type === 'tool/result')
      .map((event) => (event.data as { error?: { code: string } }).error?.code);
    expect(results).toEqual(['TOOL_DENIED', 'TOOL_DENIED']);
  });

  it('the model picker switches the route of the next request', async () => {
    const setup = await setUp(() => []);
    const { sessionId } = setup;
    const options = await acp!.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: 'model',
      value: 'demo/running-example',
    });
    const model = options.configOptions.find((option) => option.id === 'model');
    expect(model).toMatchObject({ category: 'model', currentValue: 'demo/running-example' });
    expect(JSON.stringify(model)).toContain('deepseek/deepseek-chat');
    writeFileSync(join(setup.box.workspace, 'README.md'), '# Picked\n');
    const answer = await acp!.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'summarize' }],
    });
    expect(answer.stopReason).toBe('end_turn');
    expect(chunkText(acp!.updatesOf(sessionId), 'agent_message_chunk')).toContain('Demo model');
    expect(server!.requests).toHaveLength(0);
  });

  it('a turn that fails answers the prompt with a JSON-RPC error carrying the provider code; the session goes on', async () => {
    const setup = await setUp(() => [
      { status: 401, error: { type: 'authentication_error', message: 'bad key' } },
      { text: 'Working again.' },
    ]);
    const { sessionId } = setup;
    const failure = await acp!.agent
      .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toMatchObject({ code: -32000, data: { code: 'AUTH' } });
    const again = await acp!.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'hello again' }],
    });
    expect(again.stopReason).toBe('end_turn');
    const log = await durableLog(setup.box, sessionId);
    expect(
      log
        .filter((event) => event.type === 'turn/end')
        .map((event) => (event.data as { reason: { kind: string } }).reason.kind),
    ).toEqual(['error', 'completed']);
  });
});
