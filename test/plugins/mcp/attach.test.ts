import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, mcpPlugin } from '../../../src/index.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';
import type { Sandbox } from '../../tools/support.ts';
import { sandbox } from '../../tools/support.ts';
import { filesystemServer, headerToolNames, loggedResults } from './support.ts';

let box: Sandbox;
beforeEach(() => {
  box = sandbox('rein-mcp-attach-');
});
afterEach(() => box.cleanup());

describe('MCP: servers of one agent (attach)', () => {
  it('an attached server serves its agent alone, and shuts down when that agent is disposed', async () => {
    writeFileSync(join(box.workspace, 'a.txt'), 'alpha');
    const model = new ScriptedProvider({
      responses: [
        {
          toolCalls: [
            {
              id: 'r1',
              name: 'mcp__editor__read_text_file',
              arguments: { path: join(box.workspace, 'a.txt') },
            },
          ],
        },
        { text: 'read it' },
        {
          toolCalls: [
            {
              id: 'r2',
              name: 'mcp__editor__read_text_file',
              arguments: { path: join(box.workspace, 'a.txt') },
            },
          ],
        },
        { text: 'could not' },
      ],
    });
    const mcp = mcpPlugin({ cwd: box.workspace, outputDirectory: join(box.reinHome, 'out') });
    const harness = createHarness({ providers: [model], plugins: [mcp] });
    const withServers = await harness.createAgent({ provider: 'scripted', model: 'm' });
    const other = await harness.createAgent({ provider: 'scripted', model: 'm' });
    const attachment = mcp.attach(withServers.id, { editor: filesystemServer(box.workspace) });
    withServers.followup('read a.txt');
    await withServers.whenIdle();
    expect(
      loggedResults(withServers).map(({ callId, text, isError }) => ({ callId, text, isError })),
    ).toEqual([{ callId: 'r1', text: 'alpha', isError: false }]);
    expect(headerToolNames(withServers)[0]).toContain('mcp__editor__read_text_file');
    expect(
      attachment.status().map(({ name, state, agent, origin }) => ({ name, state, agent, origin })),
    ).toEqual([{ name: 'editor', state: 'ready', agent: withServers.id, origin: { scope: 'session' } }]);

    other.followup('read a.txt too');
    await other.whenIdle();
    expect(loggedResults(other).map(({ callId, isError, code }) => ({ callId, isError, code }))).toEqual([
      { callId: 'r2', isError: true, code: 'UNKNOWN_TOOL' },
    ]);
    expect(headerToolNames(other)).toEqual([[]]);

    await withServers.dispose();
    await attachment.close();
    expect(harness.tools.list(undefined, withServers.id).map((tool) => tool.name)).toEqual([]);
    expect(mcp.status()).toEqual([]);
    await harness.dispose();
    await mcp.close();
  });

  it('rejects an invalid configuration with MCP_INVALID_CONFIG and starts nothing', async () => {
    const mcp = mcpPlugin({ cwd: box.workspace });
    const harness = createHarness({ plugins: [mcp] });
    expect(() => mcp.attach('x', { broken: { type: 'carrier-pigeon', url: 'x' } as never })).toThrow(
      expect.objectContaining({
        code: 'MCP_INVALID_CONFIG',
        message: expect.stringContaining('unknown transport "carrier-pigeon"'),
      }),
    );
    expect(mcp.status()).toEqual([]);
    await harness.dispose();
  });
});
