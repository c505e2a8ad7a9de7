import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createHarness,
  createReinHarness,
  loadMcpConfig,
  mcpPlugin,
  mcpToolName,
  parseMcpServerConfig,
  trustMcpProject,
} from '../../../src/index.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';
import type { Sandbox } from '../../tools/support.ts';
import { sandbox } from '../../tools/support.ts';
import { filesystemServer, hostileServer, loggedResults } from './support.ts';

let box: Sandbox;
beforeEach(() => {
  box = sandbox('rein-mcp-config-');
});
afterEach(() => box.cleanup());

const code = (run: () => unknown): { code: string; message: string } => {
  try {
    run();
  } catch (error) {
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  throw new Error('did not throw');
};

describe('MCP configuration', () => {
  it('parses the .mcp.json shapes and expands ${VAR} and ${VAR:-default}', () => {
    const env = { TOKEN: 'secret-1', HOME_DIR: '/home/me' };
    expect(
      parseMcpServerConfig(
        'files',
        { command: 'npx', args: ['-y', 'server', '${HOME_DIR}'], env: { KEY: '${TOKEN}' } },
        { env },
      ),
    ).toEqual({
      type: 'stdio',
      command: 'npx',
      args: ['-y', 'server', '/home/me'],
      env: { KEY: 'secret-1' },
    });
    expect(
      parseMcpServerConfig(
        'web',
        {
          type: 'http',
          url: 'https://${HOST:-example.com}/mcp',
          headers: { Authorization: 'Bearer ${TOKEN}' },
        },
        { env },
      ),
    ).toEqual({
      type: 'http',
      url: 'https://example.com/mcp',
      headers: { Authorization: 'Bearer secret-1' },
    });
    expect(parseMcpServerConfig('old', { type: 'sse', url: 'http://localhost:1/sse' }, { env })).toEqual({
      type: 'sse',
      url: 'http://localhost:1/sse',
    });
  });

  it('bad entries are typed errors naming the field: unknown transport, missing command, unset variable', () => {
    expect(
      code(() => parseMcpServerConfig('x', { type: 'websocket', url: 'ws://x' }, { where: '/p/.mcp.json' })),
    ).toEqual({
      code: 'MCP_INVALID_CONFIG',
      message: '/p/.mcp.json: mcpServers.x.type: unknown transport "websocket" (known: stdio, http, sse)',
    });
    expect(code(() => parseMcpServerConfig('x', { type: 'stdio', args: [] }))).toEqual({
      code: 'MCP_INVALID_CONFIG',
      message: 'mcpServers.x.command must be a non-empty string',
    });
    expect(code(() => parseMcpServerConfig('x', { args: ['a'] }))).toEqual({
      code: 'MCP_INVALID_CONFIG',
      message: 'mcpServers.x needs a "command" (stdio) or a "url" (http, sse)',
    });
    expect(
      code(() => parseMcpServerConfig('x', { command: 'a', env: { K: '${NOPE}' } }, { env: {} })),
    ).toEqual({
      code: 'MCP_INVALID_CONFIG',
      message: 'mcpServers.x.env.K: environment variable NOPE is not set',
    });
  });

  it('tool names are sanitized, unique and at most 64 characters', () => {
    const taken = new Set<string>();
    const name = (server: string, tool: string): string => {
      const chosen = mcpToolName(server, tool, (candidate) => taken.has(candidate));
      taken.add(chosen);
      return chosen;
    };
    expect(name('my.server', 'read file')).toBe('mcp__my_server__read_file');
    const clash = name('my_server', 'read_file');
    expect(clash).toMatch(/^mcp__my_server__read_file_[0-9a-f]{8}$/);
    const long = name('s', 'x'.repeat(100));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^mcp__s__x+_[0-9a-f]{8}$/);
    for (const chosen of taken) expect(chosen).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('a tool name collision across servers: the second is renamed with a warning, both work', async () => {
    const warnings: string[] = [];
    const controls = ['one', 'two'].map((name) => {
      const control = join(box.base, `${name}.json`);
      writeFileSync(control, JSON.stringify({ mode: 'ok' }));
      return control;
    });
    const mcp = mcpPlugin({
      cwd: box.workspace,
      servers: [
        { name: 'a.b', config: hostileServer(controls[0]!) },
        { name: 'a_b', config: hostileServer(controls[1]!) },
      ],
      onWarning: (warning) => warnings.push(`${warning.code}: ${warning.message}`),
    });
    const model = new ScriptedProvider({ responses: [], fallback: { text: 'ok' } });
    const harness = createHarness({ providers: [model], plugins: [mcp] });
    await mcp.start();
    const pids = mcp
      .status()
      .flatMap((server) =>
        server.tools
          .filter((tool) => tool.tool === 'pid')
          .map((tool) => ({ server: server.name, name: tool.name })),
      );
    expect(pids).toHaveLength(2);
    expect(pids.map((tool) => tool.name).sort()).toEqual([
      'mcp__a_b__pid',
      expect.stringMatching(/^mcp__a_b__pid_[0-9a-f]{8}$/),
    ]);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^MCP_TOOL_RENAMED: MCP server a[._]b: tool "pid" is called mcp__a_b__pid_[0-9a-f]{8}, as mcp__a_b__pid is taken$/,
      ),
    );
    model.push({
      toolCalls: pids.map((tool, index) => ({ id: `c${index}`, name: tool.name, arguments: {} })),
    });
    const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
    agent.followup('go');
    await agent.whenIdle();
    const texts = loggedResults(agent).map((result) => result.text);
    const launched = controls.map((control) => readFileSync(`${control}.launches`, 'utf8').trim());
    expect(texts.sort()).toEqual(launched.sort());
    await harness.dispose();
    await mcp.close();
  }, 30_000);

  it('.mcp.json: an invalid file names the position; a project is trusted per directory and content', async () => {
    const file = join(box.workspace, '.mcp.json');
    writeFileSync(file, '{\n  "mcpServers": {\n    "x": { "command": "a" }\n  },,\n}\n');
    const broken = await loadMcpConfig({ home: box.reinHome, cwd: box.workspace });
    expect(broken.problems).toEqual([
      {
        file,
        code: 'INVALID_CONFIG',
        message: expect.stringMatching(
          /^.*\.mcp\.json: invalid JSON at line 4, column 5: Expected double-quoted property name$/,
        ),
      },
    ]);
    writeFileSync(file, JSON.stringify({ mcpServers: { x: { command: 'a' } } }));
    mkdirSync(join(box.workspace, 'sub'));
    const untrusted = await loadMcpConfig({ home: box.reinHome, cwd: join(box.workspace, 'sub') });
    expect(untrusted.project).toMatchObject({ file, trusted: false, changedSinceTrust: false });
    await trustMcpProject({ home: box.reinHome, cwd: box.workspace });
    expect((await loadMcpConfig({ home: box.reinHome, cwd: box.workspace })).project?.trusted).toBe(true);
    writeFileSync(file, JSON.stringify({ mcpServers: { x: { command: 'b' } } }));
    expect((await loadMcpConfig({ home: box.reinHome, cwd: box.workspace })).project).toMatchObject({
      trusted: false,
      changedSinceTrust: true,
    });
  });

  it('the app harness: user servers run, untrusted and invalid project servers are listed, never started', async () => {
    writeFileSync(
      join(box.reinHome, 'config.json'),
      JSON.stringify({ mcpServers: { files: filesystemServer(box.workspace), broken: { type: 'pigeon' } } }),
    );
    writeFileSync(
      join(box.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { proj: { command: 'rm', args: ['-rf', '/'] } } }),
    );
    const harness = await createReinHarness({ cwd: box.workspace, home: box.reinHome, env: {} });
    await harness.mcp.start();
    expect(
      harness.mcp.status().map(({ name, state, origin }) => ({ name, state, scope: origin.scope })),
    ).toEqual([
      { name: 'files', state: 'ready', scope: 'user' },
      { name: 'proj', state: 'untrusted', scope: 'project' },
      { name: 'broken', state: 'invalid', scope: 'user' },
    ]);
    expect(harness.mcpNotices).toEqual([
      expect.stringContaining('MCP server broken is not started: '),
      expect.stringContaining('1 MCP server of this project (proj) is not started until you trust .mcp.json'),
    ]);
    await harness.dispose();
  }, 30_000);
});
