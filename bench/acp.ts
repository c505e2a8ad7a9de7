// `npm run bench:acp`: what `rein acp` adds between a model's streamed delta and the editor seeing it.
// A loopback vendor (Chat Completions SSE) streams numbered deltas and stamps each one as it writes it;
// the real binary runs the turn, and the same clock stamps each delta again where it arrives: as a
// `session/update` in the SDK's own client (`rein acp`), and, as the baseline measured in the same run,
// as the `assistant/chunk` line of `rein run --json` (the same loop, log and provider path, no ACP).
// The added latency is the difference of the medians (target ≤ 1 ms). A second pass streams 100 000
// deltas as fast as the pipe takes them and reports each process's peak RSS (memory must stay bounded).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { PROTOCOL_VERSION, client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { formatNumber, markdownTable, median } from './stats.ts';

const reinBin = resolve(import.meta.dirname, '../bin/rein.js');
const pacedDeltas = Number(process.argv.find((arg) => arg.startsWith('--paced='))?.slice(8) ?? 400);
const bulkDeltas = Number(process.argv.find((arg) => arg.startsWith('--bulk='))?.slice(7) ?? 100_000);
const gapMs = 2;

const now = (): number => performance.timeOrigin + performance.now();

interface Vendor {
  url: string;
  /** When delta i was written, in ms on this process's clock. */
  sent: number[];
  close(): Promise<void>;
}

/** A loopback Chat Completions server streaming `count` deltas `d0 `, `d1 `, … spaced by `gap` ms (0: at once). */
async function startVendor(count: number, gap: number): Promise<Vendor> {
  const sent: number[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const frame = (delta: Record<string, unknown>, finish: string | null = null): string =>
        `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 1, model: 'deepseek-chat', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.write(frame({ role: 'assistant', content: '' }));
      let index = 0;
      const finish = (): void => {
        response.write(frame({}, 'stop'));
        response.end('data: [DONE]\n\n');
      };
      const next = (): void => {
        if (index >= count) return finish();
        if (gap === 0) {
          // Respect the socket's backpressure so the bulk pass measures Rein, not a buffer in this process.
          while (index < count) {
            sent[index] = now();
            const ok = response.write(frame({ content: `d${index} ` }));
            index++;
            if (!ok) return void response.once('drain', next);
          }
          return finish();
        }
        sent[index] = now();
        response.write(frame({ content: `d${index} ` }));
        index++;
        setTimeout(next, gap);
      };
      next();
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

function peakRssMb(child: ChildProcess): number {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    return kb / 1024;
  } catch {
    // Not Linux, or the process is gone: the peak is unknown.
    return Number.NaN;
  }
}

function environment(home: string, vendor: Vendor): NodeJS.ProcessEnv {
  return {
    ...process.env,
    REIN_HOME: home,
    DEEPSEEK_API_KEY: 'sk-bench',
    DEEPSEEK_BASE_URL: vendor.url,
    OPENAI_API_KEY: '',
    ANTHROPIC_API_KEY: '',
    REIN_MODEL: '',
  };
}

/** Marks each delta's arrival from a stream of text pieces (`d<i> ` tokens, possibly split or merged). */
function arrivals(count: number): { arrived: number[]; take(text: string): void } {
  const arrived: number[] = new Array<number>(count);
  let pending = '';
  return {
    arrived,
    take(text) {
      const at = now();
      pending += text;
      const pattern = /d(\d+) /g;
      let last = 0;
      for (const match of pending.matchAll(pattern)) {
        arrived[Number(match[1])] ??= at;
        last = match.index + match[0].length;
      }
      pending = pending.slice(last);
    },
  };
}

interface Pass {
  latencies: number[];
  peakMb: number;
  /** From the vendor's first delta to the last one's arrival. */
  seconds: number;
}

function measured(arrived: readonly number[], sent: readonly number[], peakMb: number): Pass {
  const latencies = arrived.map((at, index) => at - sent[index]!);
  const last = Math.max(...arrived.filter((at) => Number.isFinite(at)));
  return { latencies, peakMb, seconds: (last - sent[0]!) / 1000 };
}

async function viaAcp(workspace: string, home: string, count: number, gap: number): Promise<Pass> {
  const vendor = await startVendor(count, gap);
  const child = spawn(process.execPath, [reinBin, 'acp'], {
    cwd: workspace,
    env: environment(home, vendor),
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const seen = arrivals(count);
  const app = client({ name: 'bench' }).onNotification(methods.client.session.update, ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text')
      seen.take(update.content.text);
  });
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  await connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION });
  const { sessionId } = await connection.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const answer = await connection.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'stream' }],
  });
  if (answer.stopReason !== 'end_turn') throw new Error(`acp: stop reason ${answer.stopReason}`);
  const peakMb = peakRssMb(child);
  connection.close();
  child.stdin.end();
  await new Promise((done) => child.on('close', done));
  await vendor.close();
  return measured(seen.arrived, vendor.sent, peakMb);
}

async function viaRunJson(workspace: string, home: string, count: number, gap: number): Promise<Pass> {
  const vendor = await startVendor(count, gap);
  const child = spawn(process.execPath, [reinBin, 'run', '--json', '--approve', 'yolo', 'stream'], {
    cwd: workspace,
    env: environment(home, vendor),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const seen = arrivals(count);
  let peakMb = Number.NaN;
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    buffered += text;
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      if (!line.includes('"assistant/chunk"')) {
        if (line.includes('"turn/end"')) peakMb = peakRssMb(child);
        continue;
      }
      const event = JSON.parse(line) as { data: { chunk: { type: string; text?: string } } };
      if (event.data.chunk.type === 'text-delta') seen.take(event.data.chunk.text ?? '');
    }
  });
  await new Promise((done) => child.on('close', done));
  await vendor.close();
  return measured(seen.arrived, vendor.sent, peakMb);
}

const root = mkdtempSync(join(tmpdir(), 'rein-bench-acp-'));
const workspace = join(root, 'workspace');
const home = join(root, 'home');
mkdirSync(workspace, { recursive: true });
writeFileSync(join(workspace, 'README.md'), '# Bench\n');
try {
  const runPaced = await viaRunJson(workspace, home, pacedDeltas, gapMs);
  const acpPaced = await viaAcp(workspace, home, pacedDeltas, gapMs);
  const missing = [...runPaced.latencies, ...acpPaced.latencies].filter((value) => !Number.isFinite(value));
  if (missing.length > 0) throw new Error(`${missing.length} deltas never arrived`);
  const baseline = median(runPaced.latencies);
  const through = median(acpPaced.latencies);
  const added = through - baseline;
  const runBulk = await viaRunJson(workspace, home, bulkDeltas, 0);
  const acpBulk = await viaAcp(workspace, home, bulkDeltas, 0);
  process.stdout.write(
    `rein acp: model delta → client session/update (Node ${process.version})\n\n` +
      `Paced: ${pacedDeltas} deltas ${gapMs} ms apart, from the loopback vendor's write to arrival\n\n` +
      `${markdownTable(
        ['path', 'median ms', 'p90 ms'],
        [
          [
            'rein run --json (baseline: assistant/chunk line)',
            formatNumber(baseline),
            formatNumber(percentile(runPaced.latencies, 0.9)),
          ],
          [
            'rein acp (SDK client: session/update)',
            formatNumber(through),
            formatNumber(percentile(acpPaced.latencies, 0.9)),
          ],
        ],
      )}\n\n` +
      `added by ACP: ${formatNumber(added)} ms median (target ≤ 1 ms: ${added <= 1 ? 'met' : 'MISSED'})\n\n` +
      `Bulk: ${bulkDeltas} deltas as fast as the pipe takes them\n\n` +
      `${markdownTable(
        ['path', 'seconds (first delta sent → last arrived)', 'peak RSS MB'],
        [
          ['rein run --json', formatNumber(runBulk.seconds), formatNumber(runBulk.peakMb)],
          ['rein acp', formatNumber(acpBulk.seconds), formatNumber(acpBulk.peakMb)],
        ],
      )}\n`,
  );
  if (added > 1) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}
