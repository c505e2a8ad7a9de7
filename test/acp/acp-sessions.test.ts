import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RequestError, methods } from '@agentclientprotocol/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../cli/rein-process.ts';
import { runRein, sandbox } from '../cli/rein-process.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { AcpClient } from './acp-client.ts';
import { chunkText, startAcp, updateKinds } from './acp-client.ts';

let box: Sandbox;
let acp: AcpClient | undefined;
let server: FakeServer | undefined;

beforeEach(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
  writeFileSync(join(box.workspace, 'README.md'), '# Project\n\n## Usage\n\nRun it.\n');
});

afterEach(async () => {
  await acp?.close();
  await server?.close();
  acp = undefined;
  server = undefined;
  box.cleanup();
});

/** Runs one prompt with `rein run` (the offline demo) and returns the new session's id. */
async function sessionFromRun(prompt: string): Promise<string> {
  const run = await runRein(['run', prompt], { cwd: box.workspace, env: box.env });
  expect(run.code).toBe(0);
  const listed = await runRein(['sessions', '--json'], { cwd: box.workspace, env: box.env });
  const rows = JSON.parse(listed.stdout) as { id: string }[];
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

describe('rein acp: sessions', () => {
  it('session/load replays a session rein run created, and the next prompt continues it', async () => {
    const sessionId = await sessionFromRun('summarize the readme');
    acp = await startAcp({ cwd: box.workspace, env: box.env });

    const listed = await acp.agent.request(methods.agent.session.list, { cwd: box.workspace });
    expect(listed.sessions).toEqual([
      expect.objectContaining({ sessionId, cwd: box.workspace, title: 'summarize the readme' }),
    ]);

    const loaded = await acp.agent.request(methods.agent.session.load, {
      sessionId,
      cwd: box.workspace,
      mcpServers: [],
    });
    const replayed = acp.updatesOf(sessionId);
    // The demo's running example: the read, the shell count (denied without a terminal), the summary.
    expect(updateKinds(replayed)).toEqual([
      'user_message_chunk',
      'agent_message_chunk',
      'tool_call',
      'agent_message_chunk',
      'tool_call',
      'agent_message_chunk',
    ]);
    expect(chunkText(replayed, 'user_message_chunk')).toBe('summarize the readme');
    expect(replayed.find((update) => update.sessionUpdate === 'tool_call')).toMatchObject({
      title: 'read_file README.md',
      kind: 'read',
      status: 'completed',
      locations: [{ path: join(box.workspace, 'README.md') }],
    });
    expect(chunkText(replayed, 'agent_message_chunk')).toContain('Usage');
    expect(loaded.modes?.currentModeId).toBe('ask');

    const before = replayed.length;
    const answer = await acp.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'again' }],
    });
    expect(answer.stopReason).toBe('end_turn');
    expect(updateKinds(acp.updatesOf(sessionId).slice(before))).toEqual([
      'agent_message_chunk',
      'tool_call',
      'tool_call_update:in_progress',
      'tool_call_update:completed',
      'agent_message_chunk',
      // The shell count: the test client allows it.
      'tool_call',
      'tool_call_update:in_progress',
      'tool_call_update:completed',
      'agent_message_chunk',
    ]);
    const shown = await runRein(['show', sessionId], { cwd: box.workspace, env: box.env });
    expect(shown.stdout).toContain('again');
  });

  it('loading a corrupt session is a JSON-RPC error with Rein code, and the file stays byte for byte', async () => {
    const sessionId = await sessionFromRun('summarize the readme');
    const file = join(box.home, 'sessions', `${sessionId}.jsonl`);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.splice(3, 0, '{"seq": "this is not a record');
    writeFileSync(file, lines.join('\n'));
    const bytes = readFileSync(file);
    const names = readdirSync(join(box.home, 'sessions')).sort();
    acp = await startAcp({ cwd: box.workspace, env: box.env });

    const failure = await acp.agent
      .request(methods.agent.session.load, { sessionId, cwd: box.workspace, mcpServers: [] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    expect(failure).toBeInstanceOf(RequestError);
    expect((failure as RequestError).data).toMatchObject({ code: 'SESSION_CORRUPT' });
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(readdirSync(join(box.home, 'sessions')).sort()).toEqual(names);
    // The agent is still up: a new session works.
    const created = await acp.agent.request(methods.agent.session.new, {
      cwd: box.workspace,
      mcpServers: [],
    });
    expect(created.sessionId).not.toBe(sessionId);
  });

  it('an MCP server passed in session/new serves that session', async () => {
    writeFileSync(join(box.workspace, 'facts.txt'), 'the sky is green here');
    const target = join(box.workspace, 'facts.txt');
    server = await startFakeOpenAIServer([
      {
        toolCalls: [
          { id: 'call_mcp', name: 'mcp__files__read_text_file', arguments: JSON.stringify({ path: target }) },
        ],
      },
      { text: 'It says the sky is green.' },
    ]);
    acp = await startAcp({
      cwd: box.workspace,
      env: { ...box.env, DEEPSEEK_API_KEY: 'sk-acp-test', DEEPSEEK_BASE_URL: server.url },
    });
    const filesystemEntry = resolve(
      import.meta.dirname,
      '../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
    );
    const { sessionId } = await acp.agent.request(methods.agent.session.new, {
      cwd: box.workspace,
      mcpServers: [
        { name: 'files', command: process.execPath, args: [filesystemEntry, box.workspace], env: [] },
      ],
    });

    const answer = await acp.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: 'what does facts.txt say?' }],
    });

    expect(answer.stopReason).toBe('end_turn');
    const updates = acp.updatesOf(sessionId);
    const done = updates.find(
      (update) =>
        update.sessionUpdate === 'tool_call_update' &&
        update.toolCallId === 'call_mcp' &&
        update.status === 'completed',
    );
    expect(JSON.stringify(done)).toContain('the sky is green here');
    const sent = server.requests[0]!.body as { tools: { function: { name: string } }[] };
    expect(sent.tools.map((tool) => tool.function.name)).toContain('mcp__files__read_text_file');
  });
});
