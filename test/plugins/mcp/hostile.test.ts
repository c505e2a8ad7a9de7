import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { McpWarning } from '../../../src/index.ts';
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
});
