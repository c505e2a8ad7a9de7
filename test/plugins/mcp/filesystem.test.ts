import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventTypes, eventsOf } from '../../../src/testing/index.ts';
import type { Sandbox } from '../../tools/support.ts';
import { sandbox } from '../../tools/support.ts';
import type { McpFixture } from './support.ts';
import { filesystemServer, headerToolNames, loggedResults, mcpFixture } from './support.ts';

let box: Sandbox;
let fixture: McpFixture | undefined;
beforeEach(() => {
  box = sandbox('rein-mcp-fs-');
});
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  box.cleanup();
});

describe('MCP: @modelcontextprotocol/server-filesystem over stdio', () => {
  it('reads and lists through Rein; a write asks for approval in ask mode and runs once allowed', async () => {
    writeFileSync(join(box.workspace, 'notes.txt'), 'hello from the workspace\n');
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { files: filesystemServer(box.workspace) } },
      responses: [
        {
          toolCalls: [
            {
              id: 'r1',
              name: 'mcp__files__read_text_file',
              arguments: { path: join(box.workspace, 'notes.txt') },
            },
            { id: 'l1', name: 'mcp__files__list_directory', arguments: { path: box.workspace } },
          ],
        },
        {
          toolCalls: [
            {
              id: 'w1',
              name: 'mcp__files__write_file',
              arguments: { path: join(box.workspace, 'out.txt'), content: 'written by mcp\n' },
            },
          ],
        },
        { text: 'all done' },
      ],
      approver: () => ({ decision: 'allow-once' }),
    });
    const { agent } = fixture;
    agent.followup('read, list and write');
    await agent.whenIdle();
    expect(
      loggedResults(agent).map(({ callId, text, isError, code }) => ({ callId, text, isError, code })),
    ).toEqual([
      { callId: 'r1', text: 'hello from the workspace\n', isError: false, code: undefined },
      { callId: 'l1', text: '[FILE] notes.txt', isError: false, code: undefined },
      {
        callId: 'w1',
        text: `Successfully wrote to ${join(box.workspace, 'out.txt')}`,
        isError: false,
        code: undefined,
      },
    ]);
    expect(readFileSync(join(box.workspace, 'out.txt'), 'utf8')).toBe('written by mcp\n');
    // Reads are read-only (readOnlyHint) and ran without asking; the destructive write asked once.
    expect(fixture.asked.map((request) => request.name)).toEqual(['mcp__files__write_file']);
    expect(eventsOf(agent.session, 'tool/approval-decided')).toEqual([
      { requestId: expect.any(String), callId: 'w1', decision: 'allow-once' },
    ]);
    const tools = headerToolNames(agent)[0]!;
    expect(tools).toContain('mcp__files__read_text_file');
    expect(tools).toContain('mcp__files__write_file');
    expect(tools).toContain('read_file');
    expect(eventTypes(agent.session, { chunks: false }).filter((type) => type.startsWith('tool/'))).toEqual([
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
      'tool/call',
      'tool/approval-requested',
      'tool/approval-decided',
      'tool/result',
    ]);
    const [read] = eventsOf<{ meta: unknown }>(agent.session, 'tool/result');
    expect(read!.meta).toEqual({
      mcp: { server: 'files', tool: 'read_text_file' },
      structuredContent: { content: 'hello from the workspace\n' },
    });
  });

  it('a deny rule over the whole server refuses its tools; an allow rule for one tool lets it run unasked', async () => {
    const create = {
      id: 'd1',
      name: 'mcp__files__create_directory',
      arguments: { path: join(box.workspace, 'sub') },
    };
    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { files: filesystemServer(box.workspace) } },
      rules: [
        { decision: 'allow', tool: 'mcp__files__create_directory' },
        { decision: 'deny', tool: 'mcp__files__*', reason: 'no file server tools' },
      ],
      responses: [{ toolCalls: [create] }, { text: 'ok' }],
    });
    fixture.agent.followup('go');
    await fixture.agent.whenIdle();
    expect(
      loggedResults(fixture.agent).map(({ callId, isError, code, text }) => ({
        callId,
        isError,
        code,
        text,
      })),
    ).toEqual([{ callId: 'd1', isError: true, code: 'TOOL_DENIED', text: 'Error: no file server tools' }]);
    await fixture.close();

    fixture = await mcpFixture({
      workspace: box.workspace,
      reinHome: box.reinHome,
      mcp: { servers: { files: filesystemServer(box.workspace) } },
      rules: [{ decision: 'allow', tool: 'mcp__files__create_directory' }],
      responses: [{ toolCalls: [create] }, { text: 'ok' }],
    });
    fixture.agent.followup('go');
    await fixture.agent.whenIdle();
    expect(loggedResults(fixture.agent).map(({ callId, isError }) => ({ callId, isError }))).toEqual([
      { callId: 'd1', isError: false },
    ]);
    expect(fixture.asked).toEqual([]);
  });
});
