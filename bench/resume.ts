// `npm run bench:resume` (issue 25, items 2 and 4): what a long session costs on disk and to resume.
//  1. Log size: a 5,000-step agent session (scripted model, one tool call a step with a 2 KB result)
//     run through the real loop into the disk store; the file's bytes against its payload (the text of
//     every message: prompts, answers, call arguments, results), beside the full-envelope export.
//  2. Cold resume: sessions of 50k and 1M events (turns of a tool step and an answer step, mostly
//     stream chunks), each `rein run --continue "…"` on the offline demo model in a fresh process
//     (the whole CLI: start, list, open, one turn, release; the demo's pacing off), median of several,
//     beside `node -e 0` measured in the same run.
//     Each repetition also runs this Rein once with the session's snapshot deleted first (the full read).
//     `--baseline=<checkout>/bin/rein.js` times an older Rein too, on the same session exported as
//     full envelopes (format 0, the only one it reads), in the same loop; with `--baseline-format=1`
//     (a baseline that reads format 1 and keeps snapshots) on a copy of the same format 1 file, its
//     snapshot written by its own untimed first run.
// Options: --sizes=50000,1000000 --reps=5 --steps=5000 --baseline=<path> --baseline-format=0|1
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { appendTextBlockChunks } from './text-block-chunks.ts';
import type { Message } from '../src/index.ts';
import {
  DiskSessionStore,
  ScriptedProvider,
  createAssistantMessage,
  createHarness,
  createToolResultMessage,
  createUserMessage,
  defineTool,
} from '../src/internal.ts';

const repository = resolve(fileURLToPath(import.meta.url), '..', '..');
const rein = join(repository, 'bin', 'rein.js');

function option(name: string, fallback: string): string {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The UTF-8 bytes of what a message says: its texts, call arguments and tool results. */
function payloadBytes(message: Message): number {
  return contentBytes(message.content as unknown as readonly Record<string, unknown>[]);
}

function contentBytes(content: readonly Record<string, unknown>[]): number {
  let bytes = 0;
  for (const block of content) {
    if (typeof block.text === 'string') bytes += Buffer.byteLength(block.text);
    if (typeof block.arguments === 'string') bytes += Buffer.byteLength(block.arguments);
    if (Array.isArray(block.content)) bytes += contentBytes(block.content as Record<string, unknown>[]);
  }
  return bytes;
}

/** Part 1: runs `steps` tool steps through the loop into a disk store; prints bytes against payload. */
async function measureLogSize(steps: number): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rein-bench-size-'));
  try {
    const result = 'x'.repeat(1024) + 'é'.repeat(512);
    const read = defineTool<{ path: string }>({
      name: 'read_file',
      description: 'Reads a file',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
        additionalProperties: false,
      },
      execute: () => result,
    });
    const model = new ScriptedProvider({
      responses: [
        ...Array.from({ length: steps }, (_, index) => ({
          text: `Reading part ${index} of the file.`,
          toolCalls: [
            { id: `call_${index}`, name: 'read_file', arguments: { path: `src/part-${index}.ts` } },
          ],
        })),
        { text: 'Done: every part read.' },
      ],
    });
    const store = new DiskSessionStore({ root, durability: 'process-crash' });
    const harness = createHarness({ providers: [model], tools: [read as never], store });
    const agent = await harness.createAgent({ id: 'size', provider: 'scripted', model: 'bench-model' });
    agent.followup('Read every part of the file.');
    await agent.whenIdle();
    let payload = 0;
    for (const message of agent.session.derivedMessages()) payload += payloadBytes(message);
    const events = agent.session.length;
    await harness.dispose();
    const fileBytes = statSync(store.pathOf('size')).size;
    const exportBytes = Buffer.byteLength(await store.exportLog('size'));
    const over = (bytes: number): string => `${(((bytes - payload) / payload) * 100).toFixed(1)} % over`;
    console.log(
      `Log size: ${steps} tool steps with ${Buffer.byteLength(result)}-byte results, ${events} events, ` +
        `payload ${(payload / 1e6).toFixed(2)} MB (target: file ≤ 25 % over the payload)`,
    );
    console.log(
      `  disk file (format 1, compact)      ${(fileBytes / 1e6).toFixed(2).padStart(7)} MB   ${over(fileBytes)}`,
    );
    console.log(
      `  full envelopes (format 0, export)  ${(exportBytes / 1e6).toFixed(2).padStart(7)} MB   ${over(exportBytes)}`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Writes a session of at least `count` events into `root`: turns of a tool step and an answer step. */
export async function generateSession(root: string, cwd: string, count: number): Promise<number> {
  const store = new DiskSessionStore({ root, durability: 'process-crash', batchWindowMs: 1000 });
  const session = await store.create({ id: 'long', cwd, title: 'A long session' });
  const source = { kind: 'model' as const, provider: 'demo', model: 'running-example' };
  const chunks = (turn: number, step: number, deltas: number): string =>
    appendTextBlockChunks(session, turn, step, deltas);
  const usage = { inputTokens: 1200, outputTokens: 40 };
  while (session.length < count) {
    const turn = session.lastTurn + 1;
    const prompt = createUserMessage(`Please look at file ${turn} and summarize it.`);
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] });
    session.append('turn/start', { turn });
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    session.append('step/start', { turn, step: 1 });
    session.append('user/message', prompt, { surfaceOp: 'append' });
    session.append('request/context', { provider: 'demo', model: 'running-example', contextWindow: 128_000 });
    const first = session.length;
    const text = chunks(turn, 1, 20);
    const callId = `call_${turn}`;
    const call = {
      type: 'tool-call' as const,
      id: callId,
      name: 'read',
      arguments: `{"path":"f${turn}.ts"}`,
    };
    const message = createAssistantMessage([{ type: 'text', text }, call], source);
    const sources = Array.from({ length: session.length - first }, (_, index) => first + index);
    session.append(
      'assistant/message',
      { turn, step: 1, message, usage },
      { surfaceOp: 'append', sourceEventSeqs: sources },
    );
    const callEvent = session.append('tool/call', {
      turn,
      step: 1,
      callId,
      name: 'read',
      arguments: call.arguments,
    });
    const body = `export const value${turn} = ${turn};\n`.repeat(8);
    session.append(
      'tool/result',
      { turn, step: 1, message: createToolResultMessage(callId, [{ type: 'text', text: body }], false) },
      { surfaceOp: 'append', sourceEventSeqs: [callEvent.seq] },
    );
    session.append('step/end', { turn, step: 1 });
    session.append('step/start', { turn, step: 2 });
    const second = session.length;
    const answer = chunks(turn, 2, 40);
    const reply = createAssistantMessage([{ type: 'text', text: answer }], source);
    const replySources = Array.from({ length: session.length - second }, (_, index) => second + index);
    session.append(
      'assistant/message',
      { turn, step: 2, message: reply, usage },
      { surfaceOp: 'append', sourceEventSeqs: replySources },
    );
    session.append('step/end', { turn, step: 2 });
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
    if (turn % 500 === 0) await store.flush(session);
  }
  const events = session.length;
  await store.release(session);
  return events;
}

/** CPU ms of this process's waited-for children so far (Linux: /proc/self/stat cutime + cstime). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After the ") " the fields start at the third (state): cutime and cstime are the 16th and 17th.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

interface Timing {
  wall: number;
  cpu: number;
}

/** One fresh process; its wall and CPU time in ms (it must exit 0). */
function timeProcess(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Timing {
  const cpuBefore = childrenCpuMs();
  const start = performance.now();
  const child = spawnSync(process.execPath, args, { env, cwd, encoding: 'utf8' });
  const wall = performance.now() - start;
  if (child.status !== 0)
    throw new Error(`${args.join(' ')} failed (${child.status}): ${child.stderr}${child.stdout}`);
  return { wall, cpu: childrenCpuMs() - cpuBefore };
}

function figures(runs: readonly Timing[]): string {
  const wall = median(runs.map((run) => run.wall));
  const cpu = median(runs.map((run) => run.cpu));
  return `${wall.toFixed(0).padStart(6)} ms wall ${cpu.toFixed(0).padStart(6)} ms CPU`;
}

/** Part 2: cold `rein run --continue` of generated sessions against `node -e 0` (and a baseline Rein). */
async function measureResume(
  sizes: readonly number[],
  reps: number,
  baseline: string | undefined,
  baselineFormat: number,
): Promise<void> {
  console.log(
    `\nCold resume: \`rein run --continue "…"\` on the demo model, one fresh process each, median of ${reps} ` +
      `(the same loop runs \`node -e 0\`${baseline === undefined ? '' : ' and the baseline Rein'}):`,
  );
  for (const size of sizes) {
    const home = mkdtempSync(join(tmpdir(), 'rein-bench-resume-'));
    try {
      const cwd = join(home, 'workspace');
      mkdirSync(cwd, { recursive: true });
      const root = join(home, 'sessions');
      const built = performance.now();
      const events = await generateSession(root, cwd, size);
      const file = statSync(join(root, 'long.jsonl')).size;
      const buildSeconds = (performance.now() - built) / 1000;
      // The demo model's pacing (8 ms before each chunk, a stand-in for a real model's streaming) is
      // off: it is the same wait for every build and no part of resuming.
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        REIN_HOME: home,
        REIN_STORE: 'disk',
        NO_COLOR: '1',
        REIN_DEMO_DELAY_MS: '0',
      };
      for (const key of Object.keys(env)) if (key.endsWith('_API_KEY')) delete env[key];
      // The baseline gets the same session in a home of its own: exported as full envelopes (format 0)
      // for a Rein that reads only those, else a copy of the same file (its own runs write its snapshot).
      const oldEnv: NodeJS.ProcessEnv = { ...env, REIN_HOME: join(home, 'baseline') };
      if (baseline !== undefined) {
        const text =
          baselineFormat === 1
            ? readFileSync(join(root, 'long.jsonl'), 'utf8')
            : await new DiskSessionStore({ root }).exportLog('long');
        mkdirSync(join(home, 'baseline', 'sessions'), { recursive: true, mode: 0o700 });
        writeFileSync(join(home, 'baseline', 'sessions', 'long.jsonl'), text, { mode: 0o600 });
      }
      const run = (binary: string, prompt: string, runEnv: NodeJS.ProcessEnv): Timing =>
        timeProcess([binary, 'run', '--model', 'demo/running-example', '--continue', prompt], runEnv, cwd);
      // One untimed run each warms the file cache the way a user's second look at a session finds it
      // (and takes the compaction the demo's first turn on this long history triggers).
      run(rein, 'warm up', env);
      if (baseline !== undefined) run(baseline, 'warm up', oldEnv);
      const node: Timing[] = [];
      const resume: Timing[] = [];
      const full: Timing[] = [];
      const old: Timing[] = [];
      for (let rep = 0; rep < reps; rep++) {
        node.push(timeProcess(['-e', '0'], env, cwd));
        resume.push(run(rein, `summarize turn ${rep}`, env));
        // The same Rein without a snapshot (a log an older Rein wrote, or a snapshot that does not
        // match): it reads the whole log, and its release writes the snapshot the next run uses.
        rmSync(join(root, '.snapshots'), { recursive: true, force: true });
        full.push(run(rein, `summarize turn ${rep} again`, env));
        if (baseline !== undefined) old.push(run(baseline, `summarize turn ${rep}`, oldEnv));
      }
      console.log(
        `  ${events} events (${(file / 1e6).toFixed(1)} MB on disk, built in ${buildSeconds.toFixed(1)} s)`,
      );
      console.log(`    this Rein (format 1)        ${figures(resume)}`);
      console.log(`    this Rein, no snapshot      ${figures(full)}`);
      if (baseline !== undefined)
        console.log(`    baseline Rein (format ${baselineFormat})    ${figures(old)}`);
      console.log(`    node -e 0                   ${figures(node)}`);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
}

async function main(): Promise<void> {
  const sizes = option('sizes', '50000,1000000').split(',').map(Number);
  const reps = Number(option('reps', '5'));
  const steps = Number(option('steps', '5000'));
  console.log(`Node ${process.version}; ${new Date().toISOString()}`);
  if (steps > 0) await measureLogSize(steps);
  const baseline = process.argv.find((arg) => arg.startsWith('--baseline='))?.slice('--baseline='.length);
  const baselineFormat = Number(option('baseline-format', '0'));
  if (sizes.length > 0 && sizes[0]! > 0) await measureResume(sizes, reps, baseline, baselineFormat);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
