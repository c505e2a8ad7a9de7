// `npm run bench:mcp`: what Rein adds to an MCP call, and what MCP start-up costs the first model request.
//
// 1. Per-call overhead: the same stdio server (@modelcontextprotocol/server-everything, tool `echo`) is
//    called through the bare SDK client's `callTool` and through Rein (the registered tool's body, as the
//    loop runs it: connection, progress wiring, result mapping and output bounding), interleaved call by
//    call so both see the same machine. Reported: both medians and Rein's added time; target ≤ 1 ms.
// 2. Start-up: five stdio servers. Baseline: five bare SDK clients connecting and listing tools in
//    parallel (the slowest one's start when five start together). Rein: time from the first `followup`
//    to the model request with all five servers' tools. Target: no more than the slowest start.
// 3. Large results: one JSON-RPC message of 1, 4 and 11 MiB, fed in 64 KiB chunks (what a pipe delivers)
//    to the SDK's own stdio read buffer and to the one Rein puts in its place; CPU time each, same run.
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { LlmAdapter, Tool, ToolContext } from '../src/index.ts';
import { MemorySessionStore, createHarness, mcpPlugin } from '../src/index.ts';
import { McpReadBuffer } from '../src/plugins/mcp/mcp-read-buffer.ts';
import type { StdioReadBuffer } from '../src/plugins/mcp/mcp-read-buffer.ts';
import { ScriptedProvider } from '../src/testing/index.ts';
import { formatNumber, markdownTable, median } from './stats.ts';

const calls = Number(process.argv.find((arg) => arg.startsWith('--calls='))?.slice(8) ?? 400);
const entry = resolve(
  import.meta.dirname,
  '../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
const server = { type: 'stdio' as const, command: process.execPath, args: [entry, 'stdio'] };

// The same capabilities Rein's client declares (roots), so servers behave alike for both.
async function bareClient(): Promise<Client> {
  const client = new Client(
    { name: 'bench', version: '1' },
    { capabilities: { roots: { listChanged: false } } },
  );
  await client.connect(
    new StdioClientTransport({
      command: server.command,
      args: server.args,
      env: getDefaultEnvironment(),
      stderr: 'ignore',
    }),
  );
  return client;
}

async function perCallOverhead(): Promise<string[][]> {
  const bare = await bareClient();
  const mcp = mcpPlugin({ servers: { everything: server } });
  const harness = createHarness({ plugins: [mcp] });
  await mcp.start();
  const tool = harness.tools.get('mcp__everything__echo') as Tool;
  const session = await new MemorySessionStore().create({ id: 'bench' });
  const context = (): ToolContext => ({
    signal: new AbortController().signal,
    callId: 'c',
    sessionId: session.id,
    turn: 1,
    step: 1,
    session,
    deferContext: () => undefined,
    concludeTurn: () => undefined,
    reportProgress: () => undefined,
  });
  const args = { message: 'hello' };
  const bareTimes: number[] = [];
  const reinTimes: number[] = [];
  for (let index = 0; index < calls + 50; index++) {
    const warm = index < 50;
    let start = performance.now();
    await bare.callTool({ name: 'echo', arguments: args }, undefined, {
      signal: new AbortController().signal,
    });
    const bareTime = performance.now() - start;
    start = performance.now();
    await tool.execute(args, context());
    const reinTime = performance.now() - start;
    if (warm) continue;
    bareTimes.push(bareTime);
    reinTimes.push(reinTime);
  }
  await bare.close();
  await harness.dispose();
  await mcp.close();
  const bareMedian = median(bareTimes);
  const reinMedian = median(reinTimes);
  const added = reinMedian - bareMedian;
  return [
    ['bare SDK callTool (median ms)', formatNumber(bareMedian)],
    ['through Rein (median ms)', formatNumber(reinMedian)],
    [
      'Rein added per call (ms)',
      `${formatNumber(added)} ${added <= 1 ? '(≤ 1 ms: ok)' : '(> 1 ms: over target)'}`,
    ],
  ];
}

async function bareStart(count: number): Promise<number> {
  const start = performance.now();
  const clients = await Promise.all(
    Array.from({ length: count }, async () => {
      const client = await bareClient();
      await client.listTools();
      return client;
    }),
  );
  const slowest = performance.now() - start;
  await Promise.all(clients.map((client) => client.close()));
  return slowest;
}

async function reinStart(count: number): Promise<{ delay: number; tools: number }> {
  const inner = new ScriptedProvider({ responses: [{ text: 'ok' }] });
  let firstRequest: number | undefined;
  let tools = 0;
  const model: LlmAdapter = {
    provider: 'scripted',
    stream(request, signal) {
      firstRequest ??= performance.now();
      tools = request.tools?.length ?? 0;
      return inner.stream(request, signal);
    },
  };
  const servers = Object.fromEntries(Array.from({ length: count }, (_, index) => [`s${index}`, server]));
  const mcp = mcpPlugin({ servers });
  const harness = createHarness({ providers: [model], plugins: [mcp] });
  const start = performance.now();
  const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
  agent.followup('go');
  await agent.whenIdle();
  const delay = (firstRequest ?? Number.NaN) - start;
  await harness.dispose();
  await mcp.close();
  return { delay, tools };
}

async function startUp(): Promise<string[][]> {
  const count = 5;
  const reps = 3;
  const bare: number[] = [];
  const rein: number[] = [];
  let tools = 0;
  // Alternating order, so neither side always runs on a warmer (or busier) machine.
  for (let rep = 0; rep < reps; rep++) {
    if (rep % 2 === 0) {
      bare.push(await bareStart(count));
      const outcome = await reinStart(count);
      rein.push(outcome.delay);
      tools = outcome.tools;
    } else {
      const outcome = await reinStart(count);
      rein.push(outcome.delay);
      bare.push(await bareStart(count));
    }
  }
  const slowest = median(bare);
  const delay = median(rein);
  return [
    [`slowest of ${count} bare starts in parallel (median of ${reps}, ms)`, formatNumber(slowest)],
    [`Rein: first model request after (median of ${reps}, ms; ${tools} tools)`, formatNumber(delay)],
    [
      'ratio (Rein / slowest start)',
      `${formatNumber(delay / slowest)} ${delay <= slowest * 1.1 ? '(ok)' : '(over target)'}`,
    ],
  ];
}

function framingCpuMs(buffer: StdioReadBuffer, wire: Buffer): number {
  const chunk = 65_536;
  const start = process.cpuUsage();
  let messages = 0;
  for (let offset = 0; offset < wire.length; offset += chunk) {
    buffer.append(wire.subarray(offset, offset + chunk));
    while (buffer.readMessage() !== null) messages++;
  }
  const used = process.cpuUsage(start);
  if (messages !== 1) throw new Error(`framed ${messages} messages, expected 1`);
  return (used.user + used.system) / 1000;
}

function largeResults(): string[][] {
  const rows: string[][] = [];
  for (const mebibytes of [1, 4, 11]) {
    const text = 'x'.repeat(mebibytes * 1_048_576);
    const wire = Buffer.from(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } })}\n`,
    );
    const maxBufferSize = 32 * 1_048_576;
    const sdk = framingCpuMs(new ReadBuffer({ maxBufferSize }), wire);
    const rein = framingCpuMs(
      new McpReadBuffer({
        maxBytes: maxBufferSize,
        parse: (line) => JSONRPCMessageSchema.parse(JSON.parse(line)),
      }),
      wire,
    );
    rows.push([`${mebibytes} MiB`, formatNumber(sdk), formatNumber(rein), formatNumber(sdk / rein)]);
  }
  return rows;
}

// The SDK is loaded once up front, so neither side pays its first import inside a measurement.
await bareClient().then((client) => client.close());
const overhead = await perCallOverhead();
const startup = await startUp();
process.stdout.write(`MCP per-call overhead (${calls} calls of echo over stdio, interleaved)\n\n`);
process.stdout.write(`${markdownTable(['measure', 'value'], overhead)}\n\n`);
process.stdout.write('MCP start-up: five stdio servers before the first model request\n\n');
process.stdout.write(`${markdownTable(['measure', 'value'], startup)}\n\n`);
process.stdout.write('MCP large results: one stdio message framed and parsed, 64 KiB chunks (CPU ms)\n\n');
process.stdout.write(
  `${markdownTable(['message', 'SDK ReadBuffer', 'Rein McpReadBuffer', 'ratio'], largeResults())}\n`,
);
