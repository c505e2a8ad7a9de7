import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventsOf, waitForEvent } from '../../../src/testing/index.ts';
import type { Sandbox } from '../../tools/support.ts';
import { sandbox } from '../../tools/support.ts';
import type { McpFixture } from './support.ts';
import { everythingEntry, everythingServer, headerToolNames, loggedResults, mcpFixture } from './support.ts';

let box: Sandbox;
let fixture: McpFixture | undefined;
let child: ChildProcess | undefined;
beforeEach(() => {
  box = sandbox('rein-mcp-everything-');
});
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  child?.kill();
  child = undefined;
  box.cleanup();
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      server.close(() => resolve(address.port));
    });
  });
}

async function startHttpServer(mode: 'streamableHttp' | 'sse'): Promise<number> {
  const port = await freePort();
  child = spawn(process.execPath, [everythingEntry, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const onData = (text: Buffer): void => {
      seen += text.toString();
      if (/listening on port|running on port/i.test(seen)) resolve();
    };
    child!.stdout!.on('data', onData);
    child!.stderr!.on('data', onData);
    child!.once('exit', (code) => reject(new Error(`the server exited (${code}): ${seen}`)));
  });
  return port;
}

describe('MCP: @modelcontextprotocol/server-everything', () => {
  it('stdio: parallel MCP and built-in calls keep model order; annotations, images and the roots tool', async () => {
    writeFileSync(join(box.workspace, 'a.txt'), 'alpha\n');
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { everything: everythingServer() } },
      approver: () => ({ decision: 'deny', reason: 'not now' }),
      responses: [
        {
          toolCalls: [
            { id: 'e1', name: 'mcp__everything__echo', arguments: { message: 'one' } },
            { id: 'b1', name: 'read_file', arguments: { path: 'a.txt' } },
            { id: 's1', name: 'mcp__everything__get-sum', arguments: { a: 2, b: 3 } },
            { id: 'i1', name: 'mcp__everything__get-tiny-image', arguments: {} },
            { id: 'b2', name: 'list_dir', arguments: { path: '.' } },
            { id: 'e2', name: 'mcp__everything__echo', arguments: { message: 'two' } },
          ],
        },
        { toolCalls: [{ id: 't1', name: 'mcp__everything__toggle-simulated-logging', arguments: {} }] },
        { text: 'done' },
      ],
    });
    const { agent, harness } = fixture;
    agent.followup('go');
    await agent.whenIdle();
    const results = loggedResults(agent);
    expect(results.map((result) => result.callId)).toEqual(['e1', 'b1', 's1', 'i1', 'b2', 'e2', 't1']);
    expect(results[0]).toMatchObject({ text: 'Echo: one', isError: false });
    expect(results[1]).toMatchObject({ isError: false, text: expect.stringContaining('alpha') });
    expect(results[2]).toMatchObject({ isError: false, text: 'The sum of 2 and 3 is 5.' });
    expect(results[3]).toMatchObject({ isError: false, types: ['text', 'image', 'text'] });
    expect(results[5]).toMatchObject({ text: 'Echo: two', isError: false });
    // No readOnlyHint: exclusive, and it asks in `ask` mode (the approver said no).
    expect(results[6]).toMatchObject({ isError: true, code: 'TOOL_DENIED' });
    expect(fixture.asked.map((request) => request.name)).toEqual([
      'mcp__everything__toggle-simulated-logging',
    ]);
    const [imageResult] = eventsOf<{
      message: { content: { content: { type: string; mediaType?: string }[] }[] };
    }>(agent.session, 'tool/result').slice(3);
    expect(imageResult!.message.content[0]!.content[1]).toMatchObject({
      type: 'image',
      mediaType: 'image/png',
    });
    // One result per call, every call of the step logged before any result.
    const toolEvents = agent.session.events
      .filter((event) => event.type === 'tool/call' || event.type === 'tool/result')
      .map((event) => event.type);
    expect(toolEvents.slice(0, 12)).toEqual([...Array(6).fill('tool/call'), ...Array(6).fill('tool/result')]);
    const echo = harness.tools.get('mcp__everything__echo')!;
    expect(echo.effect).toBe('read');
    expect(echo.isConcurrencySafe?.({ message: 'x' })).toBe(true);
    const toggle = harness.tools.get('mcp__everything__toggle-simulated-logging')!;
    expect(toggle.effect).toBe('other');
    expect(toggle.isConcurrencySafe).toBeUndefined();
    // Rein offers the workspace as a root, so the server adds its roots tool after initialize.
    expect(headerToolNames(agent)[0]).toContain('mcp__everything__get-roots-list');
  }, 60_000);

  it('stdio: progress reaches the log and tools/progress; cancelling mid-call gives the aborted result', async () => {
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { everything: everythingServer() } },
      responses: [
        {
          toolCalls: [
            {
              id: 'long',
              name: 'mcp__everything__trigger-long-running-operation',
              arguments: { duration: 60, steps: 300 },
            },
          ],
        },
      ],
    });
    const { agent, harness } = fixture;
    const heard: unknown[] = [];
    harness.hooks.on('tools/progress', ({ call, progress }) => {
      heard.push({ callId: call.callId, ...progress });
    });
    agent.followup('go');
    await waitForEvent(agent.session, (event) => event.type === 'tool/progress', 30_000);
    agent.cancel({ kind: 'user' });
    await agent.whenIdle();
    expect(loggedResults(agent)).toEqual([
      { callId: 'long', text: 'Error: tool call aborted', isError: true, code: 'ABORTED', types: ['text'] },
    ]);
    const [first] = eventsOf(agent.session, 'tool/progress');
    expect(first).toEqual({ turn: 1, step: 1, callId: 'long', progress: 1, total: 300 });
    expect(heard[0]).toEqual({ callId: 'long', progress: 1, total: 300 });
  }, 60_000);

  it('Streamable HTTP: calls a tool of the server over HTTP', async () => {
    const port = await startHttpServer('streamableHttp');
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { web: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } } },
      responses: [{ toolCalls: [{ id: 'h1', name: 'mcp__web__echo', arguments: { message: 'over http' } }] }],
    });
    fixture.agent.followup('go');
    await fixture.agent.whenIdle();
    expect(loggedResults(fixture.agent)).toEqual([
      { callId: 'h1', text: 'Echo: over http', isError: false, code: undefined, types: ['text'] },
    ]);
    expect(fixture.mcp.status()[0]).toMatchObject({ name: 'web', state: 'ready', transport: 'http' });
  }, 60_000);

  it('legacy HTTP+SSE: an http server that only speaks SSE is reached through the fallback', async () => {
    const port = await startHttpServer('sse');
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { old: { type: 'http', url: `http://127.0.0.1:${port}/sse` } } },
      responses: [{ toolCalls: [{ id: 'h1', name: 'mcp__old__get-sum', arguments: { a: 20, b: 22 } }] }],
    });
    fixture.agent.followup('go');
    await fixture.agent.whenIdle();
    expect(loggedResults(fixture.agent)).toEqual([
      { callId: 'h1', text: 'The sum of 20 and 22 is 42.', isError: false, code: undefined, types: ['text'] },
    ]);
  }, 60_000);
});
