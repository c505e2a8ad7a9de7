// `npm run bench:adapters`: the CPU a provider adapter spends per streamed delta, over real HTTP.
//
//   npm run bench:adapters                                     # this checkout's build
//   npm run bench:adapters -- --baseline=/path/to/other/rein   # also an older checkout (its dist built)
//   npm run bench:adapters -- --deltas=100000 --reps=5 --rounds=3
//
// A loopback server in a child process (so its CPU is not counted) streams `--deltas` text deltas in
// the vendor's wire format (Chat Completions SSE, Anthropic Messages SSE), 256 deltas per write, a
// timer tick apart. Each build's adapter (`OpenAICompatibleProvider`, `AnthropicProvider` from its
// `dist/`, the package users install) consumes the whole stream in a fresh process: fetch, SSE
// parsing, JSON, the translation to Rein's chunks. Reported: the process's CPU µs per delta over the
// stream (every thread), median of the reps after one warm-up stream; builds alternate per round, and
// the ratio is taken per round (pairs) so that a load that drifts hurts both alike.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const options = new Map(
  process.argv.slice(2).map((argument) => {
    const [name, ...value] = argument.replace(/^--/, '').split('=');
    return [name!, value.join('=')] as const;
  }),
);
const deltaCount = Number(options.get('deltas') ?? '100000');
const reps = Number(options.get('reps') ?? '5');
const rounds = Number(options.get('rounds') ?? '3');
const script = fileURLToPath(import.meta.url);
type Vendor = 'openai' | 'anthropic';
const vendors: readonly Vendor[] = ['openai', 'anthropic'];

/** The SSE text of one streamed answer of `count` short deltas, as the vendor sends it. */
function wireStream(vendor: Vendor, count: number): string[] {
  const frame = (body: unknown, event?: string): string =>
    `${event !== undefined ? `event: ${event}\n` : ''}data: ${JSON.stringify(body)}\n\n`;
  const delta = (index: number): string => `w${index % 97} `;
  const frames: string[] = [];
  if (vendor === 'openai') {
    const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'bench-model' };
    frames.push(frame({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }));
    for (let index = 0; index < count; index++)
      frames.push(frame({ ...base, choices: [{ index: 0, delta: { content: delta(index) } }] }));
    frames.push(frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
    frames.push(frame({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: count } }));
    frames.push('data: [DONE]\n\n');
  } else {
    const message = {
      id: 'msg_bench',
      type: 'message',
      role: 'assistant',
      model: 'bench-model',
      content: [],
    };
    frames.push(
      frame(
        { type: 'message_start', message: { ...message, usage: { input_tokens: 10, output_tokens: 1 } } },
        'message_start',
      ),
    );
    frames.push(
      frame(
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        'content_block_start',
      ),
    );
    for (let index = 0; index < count; index++)
      frames.push(
        frame(
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: delta(index) } },
          'content_block_delta',
        ),
      );
    frames.push(frame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'));
    frames.push(
      frame(
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: count } },
        'message_delta',
      ),
    );
    frames.push(frame({ type: 'message_stop' }, 'message_stop'));
  }
  return frames;
}

/** Child: the loopback vendor; prints its URL, serves every request the same stream. */
async function serve(vendor: Vendor): Promise<void> {
  const frames = wireStream(vendor, deltaCount);
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let index = 0;
      const tick = (): void => {
        const end = Math.min(frames.length, index + 256);
        response.write(frames.slice(index, end).join(''));
        index = end;
        if (index < frames.length) setTimeout(tick, 1);
        else response.end();
      };
      tick();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
}

/** Child: one build's adapter consuming the stream `reps` times after a warm-up; prints CPU µs/delta. */
async function consume(build: string, vendor: Vendor, url: string): Promise<void> {
  const rein = (await import(
    pathToFileURL(join(build, 'dist', 'index.js')).href
  )) as typeof import('../src/index.ts');
  const models = { 'bench-model': { contextWindow: 128_000, maxOutputTokens: 8192 } };
  const adapter =
    vendor === 'openai'
      ? new rein.OpenAICompatibleProvider({ provider: 'bench', baseUrl: `${url}/v1`, apiKey: 'k', models })
      : new rein.AnthropicProvider({ provider: 'bench', baseUrl: url, apiKey: 'k', models });
  const request = { provider: 'bench', model: 'bench-model', messages: [rein.createUserMessage('go')] };
  const samples: number[] = [];
  for (let rep = 0; rep <= reps; rep++) {
    const before = process.cpuUsage();
    let deltas = 0;
    for await (const chunk of adapter.stream(request, new AbortController().signal))
      if (chunk.type === 'text-delta') deltas++;
    const used = process.cpuUsage(before);
    if (deltas !== deltaCount) throw new Error(`expected ${deltaCount} deltas, got ${deltas}`);
    if (rep > 0) samples.push((used.user + used.system) / deltas);
  }
  process.stdout.write(`${JSON.stringify(median(samples))}\n`);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const builds: { name: string; root: string }[] = [
    { name: 'this build', root: resolve(import.meta.dirname, '..') },
  ];
  const baseline = options.get('baseline');
  if (baseline !== undefined && baseline !== '')
    builds.unshift({ name: 'baseline', root: resolve(baseline) });
  console.log(
    `CPU µs per streamed delta (${deltaCount} deltas, median of ${reps} streams after a warm-up, ` +
      `${rounds} rounds, builds alternating; load average ${loadavg()[0]!.toFixed(2)}):`,
  );
  for (const vendor of vendors) {
    const server = spawn(
      process.execPath,
      ['--import', 'tsx', script, '--serve', `--vendor=${vendor}`, `--deltas=${deltaCount}`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const url = await new Promise<string>((done) =>
      server.stdout.once('data', (data) => done(String(data).trim())),
    );
    const figures = new Map<string, number[]>(builds.map((build) => [build.name, []]));
    try {
      for (let round = 0; round < rounds; round++) {
        for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
          const child = spawnSync(
            process.execPath,
            [
              '--import',
              'tsx',
              script,
              '--consume',
              `--build=${build.root}`,
              `--vendor=${vendor}`,
              `--url=${url}`,
              `--deltas=${deltaCount}`,
              `--reps=${reps}`,
            ],
            { encoding: 'utf8' },
          );
          if (child.status !== 0) throw new Error(`${build.name} ${vendor}: ${child.stderr}`);
          figures.get(build.name)!.push(Number(child.stdout.trim()));
        }
      }
    } finally {
      server.kill();
    }
    const line = builds
      .map((build) => `${build.name} ${median(figures.get(build.name)!).toFixed(2)}`)
      .join(', ');
    const pairs =
      builds.length === 2
        ? `; this build ÷ baseline by rounds ${median(figures.get('this build')!.map((value, round) => value / figures.get('baseline')![round]!)).toFixed(2)}×`
        : '';
    console.log(
      `  ${vendor.padEnd(10)} ${line}${pairs}  (per round: ${builds
        .map((build) =>
          figures
            .get(build.name)!
            .map((value) => value.toFixed(2))
            .join('/'),
        )
        .join(' | ')})`,
    );
  }
}

if (options.has('serve')) await serve(options.get('vendor') as Vendor);
else if (options.has('consume'))
  await consume(options.get('build')!, options.get('vendor') as Vendor, options.get('url')!);
else await main();
