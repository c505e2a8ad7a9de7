import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskSessionStore } from '../../src/index.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import type { Sandbox } from './rein-process.ts';
import { runRein, sandbox, startRein, waitForOutput } from './rein-process.ts';

const root = resolve(import.meta.dirname, '../..');
const everything = resolve(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const hostile = resolve(root, 'test/plugins/mcp/hostile-server.mjs');

let box: Sandbox;
let vendor: FakeServer | undefined;
beforeEach(() => {
  box = sandbox();
  mkdirSync(box.workspace, { recursive: true });
});
afterEach(async () => {
  await vendor?.close();
  vendor = undefined;
  box.cleanup();
});

function writeMcpJson(servers: Record<string, unknown>): string {
  const file = join(box.workspace, '.mcp.json');
  writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
  return file;
}

describe('rein mcp and rein run with a project .mcp.json', () => {
  it('an untrusted project server is listed, not started; after rein mcp trust one turn uses its tool', async () => {
    const file = writeMcpJson({ everything: { command: process.execPath, args: [everything, 'stdio'] } });
    const before = await runRein(['mcp', 'list'], { cwd: box.workspace, env: box.env });
    expect(before.code).toBe(0);
    expect(before.stdout).toContain(`everything  untrusted  stdio from ${file}`);
    expect(before.stdout).toContain('then run `rein mcp trust` in');
    expect(before.stderr).toContain('is not started until you trust .mcp.json');

    const trusted = await runRein(['mcp', 'trust'], { cwd: box.workspace, env: box.env });
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain(`Trusted ${file}: 1 server (everything) will start in`);

    const listed = await runRein(['mcp', 'list'], { cwd: box.workspace, env: box.env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`everything  ready  stdio from ${file} (mcp-servers/everything 2.0.0)`);
    expect(listed.stdout).toContain('  mcp__everything__echo  (read-only)');
    expect(listed.stdout).toMatch(/^ {2}mcp__everything__toggle-simulated-logging$/m);

    const doctor = await runRein(['doctor', '--json'], { cwd: box.workspace, env: box.env });
    const checks = (
      JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }
    ).checks;
    expect(checks.find((check) => check.name === 'mcp everything')).toEqual({
      name: 'mcp everything',
      status: 'ok',
      detail: expect.stringMatching(/^starts; \d+ tools \(.*\.mcp\.json\)$/),
    });

    vendor = await startFakeOpenAIServer([
      {
        toolCalls: [
          {
            id: 'call_echo',
            name: 'mcp__everything__echo',
            arguments: JSON.stringify({ message: 'hi from mcp' }),
          },
        ],
      },
      { text: 'The server echoed it.' },
    ]);
    const env = { ...box.env, DEEPSEEK_API_KEY: 'sk-test', DEEPSEEK_BASE_URL: vendor.url };
    const run = await runRein(['run', 'echo something'], { cwd: box.workspace, env });
    expect(run.stderr).toContain('mcp__everything__echo');
    expect(run.stdout).toBe('The server echoed it.\n');
    expect(run.code).toBe(0);
    const second = JSON.stringify(vendor.requests[1]!.body);
    expect(second).toContain('Echo: hi from mcp');
    const tools = (vendor.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map(
      (tool) => tool.function.name,
    );
    expect(tools).toContain('mcp__everything__echo');
    expect(tools).toContain('read_file');
  }, 90_000);

  it('an invalid .mcp.json is reported with its position, and nothing else stops working', async () => {
    const file = join(box.workspace, '.mcp.json');
    writeFileSync(file, '{\n  "mcpServers": {\n    "x": { "command": "node", }\n  }\n}\n');
    const listed = await runRein(['mcp', 'list'], { cwd: box.workspace, env: box.env });
    expect(listed.stderr).toContain(`MCP servers not loaded: ${file}: invalid JSON at line 3, column`);
    expect(listed.stdout).toContain('No MCP servers are configured');
    const run = await runRein(['run', 'hello'], { cwd: box.workspace, env: box.env });
    expect(run.code).toBe(0);
  }, 60_000);

  it('a crash during an MCP call resumes as TOOL_OUTCOME_UNKNOWN and the call is not run again', async () => {
    const control = join(box.root, 'control.json');
    writeFileSync(control, JSON.stringify({ mode: 'ok' }));
    writeMcpJson({ bad: { command: process.execPath, args: [hostile, control] } });
    expect((await runRein(['mcp', 'trust'], { cwd: box.workspace, env: box.env })).code).toBe(0);
    vendor = await startFakeOpenAIServer([
      // A call without hints may have side effects: the log is durable before it runs, so a crash
      // during it is known on resume (a read-only call lost by a crash would simply run again).
      { toolCalls: [{ id: 'call_hold', name: 'mcp__bad__hold', arguments: '{}' }] },
      { text: 'resumed fine' },
    ]);
    const env = { ...box.env, DEEPSEEK_API_KEY: 'sk-test', DEEPSEEK_BASE_URL: vendor.url };
    const { child, result } = startRein(['run', '--json', '--approve', 'yolo', 'wait for it'], {
      cwd: box.workspace,
      env,
    });
    await waitForOutput(child, 'stdout', (text) => text.includes('"type":"tool/call"'));
    // The call reached the server: the process dies with it running.
    while (!readCalls(control).includes('hold')) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGKILL');
    const killed = await result;
    const sessionId = readSessionId(killed.stdout);
    const resumed = await runRein(['run', '--resume', sessionId, 'go on'], { cwd: box.workspace, env });
    expect(resumed.stdout).toBe('resumed fine\n');
    const session = await new DiskSessionStore({ root: join(box.home, 'sessions') }).read(sessionId);
    const results = session.events.filter((event) => event.type === 'tool/result');
    expect(results.map((event) => (event.data as { error?: { code: string } }).error?.code)).toEqual([
      'TOOL_OUTCOME_UNKNOWN',
    ]);
    expect(readCalls(control)).toEqual(['hold']);
  }, 90_000);
});

function readCalls(control: string): string[] {
  try {
    return readFileSync(`${control}.calls`, 'utf8')
      .trim()
      .split('\n')
      .filter((line) => line !== '');
  } catch {
    // No call was made yet.
    return [];
  }
}

function readSessionId(stdout: string): string {
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{"live":true,"type":"session"')) continue;
    return (JSON.parse(line) as { data: { id: string } }).data.id;
  }
  throw new Error(`no session line in ${stdout.slice(0, 500)}`);
}
