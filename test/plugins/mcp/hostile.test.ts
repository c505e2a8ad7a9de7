import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { McpWarning } from '../../../src/internal.ts';
import type { Sandbox } from '../../tools/support.ts';
import { sandbox } from '../../tools/support.ts';
import type { McpFixture } from './support.ts';
import { headerToolNames, hostileServer, loggedResults, mcpFixture } from './support.ts';

let box: Sandbox;
let fixture: McpFixture | undefined;
let control: string;
beforeEach(() => {
  box = sandbox('rein-mcp-hostile-');
  control = join(box.base, 'control.json');
  writeFileSync(control, JSON.stringify({ mode: 'ok' }));
});
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  box.cleanup();
});

const launches = (): string[] => readFileSync(`${control}.launches`, 'utf8').trim().split('\n');
const call = (id: string, tool: string) => ({ id, name: `mcp__bad__${tool}`, arguments: {} });

describe('MCP: servers that misbehave', () => {
  it('a crash mid-call, a hung initialize and garbage on stdout: each a clear error result, then a restart', async () => {
    const warnings: McpWarning[] = [];
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'yolo',
      mcp: {
        servers: { bad: hostileServer(control) },
        startupTimeoutMs: 3_000,
        onWarning: (warning) => warnings.push(warning),
      },
      responses: [
        { toolCalls: [call('c1', 'pid')] },
        { toolCalls: [call('c2', 'crash')] },
        { toolCalls: [call('c3', 'pid')] },
        { text: 'turn one done' },
        { toolCalls: [call('c4', 'crash')] },
        { toolCalls: [call('c5', 'pid')] },
        { toolCalls: [call('c6', 'pid')] },
        { toolCalls: [call('c7', 'garbage')] },
        { toolCalls: [call('c8', 'pid')] },
        { toolCalls: [call('c9', 'fails')] },
        { text: 'turn two done' },
      ],
    });
    const { agent } = fixture;
    agent.followup('one');
    await agent.whenIdle();
    const [first, second] = launches();
    expect(
      loggedResults(agent).map(({ callId, text, isError, code }) => ({ callId, text, isError, code })),
    ).toEqual([
      { callId: 'c1', text: first, isError: false, code: undefined },
      {
        callId: 'c2',
        text: expect.stringMatching(
          /^Error: MCP server bad exited during crash\nlast stderr lines:\nhostile server \d+ starting in mode ok\nhostile server: crashing on purpose$/,
        ),
        isError: true,
        code: 'MCP_SERVER_DIED',
      },
      { callId: 'c3', text: second, isError: false, code: undefined },
    ]);

    agent.followup('two');
    // The next start hangs in initialize: the call after the crash times out starting it.
    const crashed = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (loggedResults(agent).length >= 4) {
          clearInterval(timer);
          writeFileSync(control, JSON.stringify({ mode: 'hang-initialize' }));
          resolve();
        }
      }, 5);
    });
    await crashed;
    const restarted = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (loggedResults(agent).length >= 5) {
          clearInterval(timer);
          writeFileSync(control, JSON.stringify({ mode: 'ok' }));
          resolve();
        }
      }, 5);
    });
    await restarted;
    await agent.whenIdle();
    const results = loggedResults(agent).slice(3);
    const all = launches();
    expect(results.map(({ callId, text, isError, code }) => ({ callId, text, isError, code }))).toEqual([
      {
        callId: 'c4',
        text: expect.stringContaining('MCP server bad exited during crash'),
        isError: true,
        code: 'MCP_SERVER_DIED',
      },
      {
        callId: 'c5',
        text: expect.stringMatching(
          /^Error: MCP server bad did not finish starting within 3000 ms\nlast stderr lines:\nhostile server \d+ starting in mode hang-initialize\nhostile server: ignoring initialize$/,
        ),
        isError: true,
        code: 'MCP_START_TIMEOUT',
      },
      { callId: 'c6', text: all[3], isError: false, code: undefined },
      {
        callId: 'c7',
        text: expect.stringContaining('MCP server bad wrote output that is not JSON-RPC to stdout'),
        isError: true,
        code: 'MCP_SERVER_DIED',
      },
      { callId: 'c8', text: all[4], isError: false, code: undefined },
      { callId: 'c9', text: 'it went wrong', isError: true, code: 'MCP_TOOL_ERROR' },
    ]);
    expect(all).toHaveLength(5);
    // The tool whose schema is not JSON Schema is skipped with a warning; the others work.
    expect(warnings).toEqual([
      {
        server: 'bad',
        code: 'MCP_TOOL_SKIPPED',
        message: expect.stringContaining(
          'tool "broken_schema" is skipped: its input schema is not valid JSON Schema',
        ),
      },
    ]);
    expect(headerToolNames(agent)[0]).not.toContain('mcp__bad__broken_schema');
    expect(headerToolNames(agent)[0]).toContain('mcp__bad__pid');
  }, 30_000);

  it('an image of a type no vendor takes becomes a note; the request carries only the PNG', async () => {
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'yolo',
      mcp: { servers: { bad: hostileServer(control) } },
      responses: [{ toolCalls: [call('i1', 'images')] }, { text: 'seen' }],
    });
    const { agent, model } = fixture;
    agent.followup('show me');
    await agent.whenIdle();
    const logged = agent.session.events.filter((event) => event.type === 'tool/result');
    expect(logged).toHaveLength(1);
    const result = (
      logged[0]!.data as {
        message: { content: { toolCallId: string; content: { type: string; text?: string }[] }[] };
      }
    ).message.content[0]!;
    expect(result.toolCallId).toBe('i1');
    expect(result.content.map((part) => (part.type === 'text' ? part.text : part.type))).toEqual([
      'two images',
      'image',
      "[image (image/svg+xml, about 6 bytes) not shown: an image's mediaType must be one of image/png, " +
        'image/jpeg, image/gif, image/webp, not "image/svg+xml"]',
    ]);
    // The request after it carries the one image the vendor takes.
    const sent = JSON.stringify(model.requests[1]!.messages);
    expect(sent.match(/"type":"image"/g)).toHaveLength(1);
    expect(sent).toContain('"mediaType":"image/png"');
  }, 30_000);

  it('a result larger than the SDK reads by default (11 MiB of text) arrives whole, bounded and spilled', async () => {
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'yolo',
      mcp: { servers: { bad: hostileServer(control) } },
      responses: [{ toolCalls: [call('l1', 'large'), call('p1', 'pid')] }, { text: 'seen' }],
    });
    const { agent } = fixture;
    agent.followup('large');
    await agent.whenIdle();
    const [large, pid] = loggedResults(agent);
    expect(large).toMatchObject({ callId: 'l1', isError: false, code: undefined });
    expect(large!.text.length).toBeLessThan(100_000);
    const spilled = agent.session.events.find((event) => event.type === 'tool/result')!.data as {
      meta?: { outputFile?: string };
    };
    expect(readFileSync(spilled.meta!.outputFile!, 'utf8')).toBe('x'.repeat(11 * 1_048_576));
    // The same server process answers the next call: the large line did not break the connection.
    expect(pid).toMatchObject({ callId: 'p1', isError: false, text: launches()[0] });
    expect(launches()).toHaveLength(1);
  }, 30_000);

  it('a message past the 32 MiB Rein reads is a clear connection failure, then a restart serves', async () => {
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'yolo',
      mcp: { servers: { bad: hostileServer(control) } },
      responses: [
        { toolCalls: [call('h1', 'huge')] },
        { text: 'first done' },
        { toolCalls: [call('p1', 'pid')] },
      ],
    });
    const { agent } = fixture;
    agent.followup('huge');
    await agent.whenIdle();
    const [huge] = loggedResults(agent);
    expect(huge).toMatchObject({ callId: 'h1', isError: true, code: 'MCP_SERVER_DIED' });
    expect(huge!.text).toContain('MCP server bad its connection failed during huge (');
    expect(huge!.text).toContain('a message longer than 33554432 bytes arrived on stdout');
    expect(huge!.text).not.toContain('not JSON-RPC');
    agent.followup('again');
    await agent.whenIdle();
    expect(loggedResults(agent)[1]).toMatchObject({ callId: 'p1', isError: false, text: launches()[1] });
  }, 30_000);

  it('cancelling a turn sends the server a cancellation notification for the running call', async () => {
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { bad: hostileServer(control) } },
      responses: [{ toolCalls: [call('w1', 'wait')] }, { toolCalls: [call('p1', 'pid')] }, { text: 'ok' }],
    });
    const { agent } = fixture;
    agent.followup('wait');
    while (!existsSync(`${control}.calls`)) await new Promise((resolve) => setTimeout(resolve, 10));
    agent.cancel({ kind: 'user' });
    await agent.whenIdle();
    expect(loggedResults(agent)).toEqual([
      { callId: 'w1', text: 'Error: tool call aborted', isError: true, code: 'ABORTED', types: ['text'] },
    ]);
    while (!existsSync(`${control}.cancelled`)) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(readFileSync(`${control}.cancelled`, 'utf8').trim()).toMatch(/^\d+$/);
    // The agent stays usable, on the same server process.
    agent.followup('again');
    await agent.whenIdle();
    expect(loggedResults(agent)[1]).toMatchObject({ callId: 'p1', isError: false, text: launches()[0] });
  }, 30_000);

  it('notifications/tools/list_changed refreshes the tools before the next step, as the request header records', async () => {
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mode: 'yolo',
      mcp: { servers: { bad: hostileServer(control) } },
      responses: [
        { toolCalls: [call('a1', 'add_tool')] },
        { toolCalls: [call('x1', 'extra')] },
        { text: 'ok' },
      ],
    });
    const { agent } = fixture;
    agent.followup('grow');
    await agent.whenIdle();
    expect(loggedResults(agent).map(({ callId, text, isError }) => ({ callId, text, isError }))).toEqual([
      { callId: 'a1', text: 'added', isError: false },
      { callId: 'x1', text: 'extra ran', isError: false },
    ]);
    const headers = headerToolNames(agent);
    expect(headers[0]).not.toContain('mcp__bad__extra');
    expect(headers[1]).toContain('mcp__bad__extra');
    expect(
      agent.session.events
        .filter((event) => event.type === 'request/header')
        .map((event) => (event.data as { reason: string }).reason),
    ).toEqual(['initial', 'change']);
  }, 30_000);

  it('a call with no answer within the per-call timeout is MCP_CALL_TIMEOUT; the server keeps serving', async () => {
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { bad: { ...hostileServer(control), callTimeoutMs: 300 } } },
      responses: [{ toolCalls: [call('w1', 'wait')] }, { toolCalls: [call('p1', 'pid')] }, { text: 'ok' }],
    });
    const { agent } = fixture;
    agent.followup('wait');
    await agent.whenIdle();
    expect(
      loggedResults(agent).map(({ callId, text, isError, code }) => ({ callId, text, isError, code })),
    ).toEqual([
      {
        callId: 'w1',
        text: 'Error: MCP server bad did not answer wait within 300 ms',
        isError: true,
        code: 'MCP_CALL_TIMEOUT',
      },
      { callId: 'p1', text: launches()[0], isError: false, code: undefined },
    ]);
  }, 30_000);

  it('a command that does not exist: the server is failed with "command not found", the agent works', async () => {
    const warnings: McpWarning[] = [];
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: {
        servers: { missing: { type: 'stdio', command: join(box.base, 'no-such-program') } },
        onWarning: (warning) => warnings.push(warning),
      },
      responses: [{ toolCalls: [{ id: 'r1', name: 'list_dir', arguments: { path: '.' } }] }, { text: 'ok' }],
    });
    fixture.agent.followup('go');
    await fixture.agent.whenIdle();
    expect(loggedResults(fixture.agent).map(({ callId, isError }) => ({ callId, isError }))).toEqual([
      { callId: 'r1', isError: false },
    ]);
    expect(warnings).toEqual([
      {
        server: 'missing',
        code: 'MCP_START_FAILED',
        message: expect.stringContaining('MCP server missing failed to start: command not found'),
      },
    ]);
    expect(fixture.mcp.status()[0]).toMatchObject({
      name: 'missing',
      state: 'failed',
      error: { code: 'MCP_START_FAILED' },
    });
  }, 30_000);
});
