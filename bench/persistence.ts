// `npx tsx bench/persistence.ts`: what the disk session store costs.
//  1. Cold load and resume of a 100k-event session (a realistic mix, mostly stream chunks), each in a
//     fresh process: `read` (parse), `open` (parse, validate, repair check, lock) and a harness
//     `resumeAgent`; baseline: constructing the same log in memory (what the memory store's open does).
//  2. Per-step loop overhead (one no-op tool call per step, instant scripted model) with the memory
//     store (baseline, same run) and the disk store under both durability policies, once with a
//     read-only tool and once with a writing one; fdatasyncs per step as the store reports them and,
//     when strace is installed, the session file's writes and fdatasyncs per step as the kernel saw them.
//     This part runs Rein's built package (`dist/`, via bench/rein-sdk.ts: `npm run build:js` first;
//     REIN_BENCH_SOURCE=src for the sources through tsx), the JavaScript users run; the cold loads and
//     the log they read are built from the sources.
// Options: --events=100000 --steps=500 --reps=5
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { appendTextBlockChunks } from './text-block-chunks.ts';
import type { AnySessionEvent, SessionStore } from '../src/index.ts';
import type { ScriptedProvider as ScriptedProviderClass } from '../src/testing/index.ts';
import {
  DiskSessionStore,
  MemorySessionStore,
  ScriptedProvider,
  Session,
  createAssistantMessage,
  createHarness,
  createToolResultMessage,
  createUserMessage,
  defineTool,
} from '../src/internal.ts';

function option(name: string, fallback: number): number {
  const value = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  return value !== undefined ? Number(value) : fallback;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const source = { kind: 'model' as const, provider: 'scripted', model: 'bench-model' };

/** A log of at least `count` events: turns of a tool step and an answer step, mostly text chunks. */
export function buildLog(count: number): readonly AnySessionEvent[] {
  const session = new Session({ header: { version: 0, id: 'bench', createdAt: Date.now() } });
  const chunks = (turn: number, step: number, deltas: number): string =>
    appendTextBlockChunks(session, turn, step, deltas);
  while (session.length < count) {
    const turn = session.lastTurn + 1;
    const prompt = createUserMessage(`Please look at file ${turn} and summarize it.`);
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] });
    session.append('turn/start', { turn });
    session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    session.append('step/start', { turn, step: 1 });
    session.append('user/message', prompt, { surfaceOp: 'append' });
    session.append('request/context', { provider: 'scripted', model: 'bench-model', contextWindow: 128_000 });
    chunks(turn, 1, 20);
    const callId = `call_${turn}`;
    const call = {
      type: 'tool-call' as const,
      id: callId,
      name: 'read_file',
      arguments: `{"path":"f${turn}.ts"}`,
    };
    const usage = { inputTokens: 1200 + turn, outputTokens: 40 };
    session.append(
      'assistant/message',
      {
        turn,
        step: 1,
        message: createAssistantMessage([{ type: 'text', text: 'Reading.' }, call], source),
        usage,
      },
      { surfaceOp: 'append' },
    );
    const callEvent = session.append('tool/call', {
      turn,
      step: 1,
      callId,
      name: 'read_file',
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
    chunks(turn, 2, 40);
    const answer = createAssistantMessage([{ type: 'text', text: 'The file exports one value.' }], source);
    session.append('assistant/message', { turn, step: 2, message: answer, usage }, { surfaceOp: 'append' });
    session.append('step/end', { turn, step: 2 });
    session.append('turn/end', { turn, reason: { kind: 'completed' } });
  }
  return session.events;
}

/** What one fresh process measures. */
type ColdPhase = 'read' | 'open' | 'resume' | 'baseline';

/** Child phase: one cold measurement (wall and CPU ms) in a fresh process, printed as JSON. */
async function measureColdLoad(root: string, phase: ColdPhase): Promise<void> {
  // The baseline needs the events in memory first; reading them is not part of what it measures.
  const seed = phase === 'baseline' ? await new DiskSessionStore({ root }).read('bench') : undefined;
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  let events: number;
  if (phase === 'read') {
    events = (await new DiskSessionStore({ root }).read('bench')).events.length;
  } else if (phase === 'open') {
    const store = new DiskSessionStore({ root });
    const session = await store.open('bench');
    events = session.length;
    await store.release(session);
  } else if (phase === 'resume') {
    const harness = createHarness({ store: new DiskSessionStore({ root }) });
    const agent = await harness.resumeAgent('bench', { provider: 'scripted', model: 'bench-model' });
    events = agent.session.length;
    await harness.dispose();
  } else {
    events = new Session({ header: seed!.header, seed: seed!.events }).length;
  }
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(JSON.stringify({ wallMs, cpuMs: (cpu.user + cpu.system) / 1000, events }));
}

/** What a W1 run builds its harness from: the sources (the default) or the built package. */
export interface StepSdk {
  createHarness: typeof createHarness;
  defineTool: typeof defineTool;
  ScriptedProvider: typeof ScriptedProviderClass;
}

const sourceSdk: StepSdk = { createHarness, defineTool, ScriptedProvider };

/** The no-op tool a W1 step calls: declared read-only, or writing (a side effect the log must precede). */
export type StepTool = 'read-only' | 'writing';

/**
 * The CPU time of this process so far in µs (all its threads: the loop and encoder on the main thread,
 * the collector's helpers, the thread pool). Unlike wall time it leaves out the time other processes
 * on a busy machine hold the cores. (Linux's per-thread counters in /proc are only brought up to date
 * at scheduler events, milliseconds apart, so they cannot time one turn.)
 */
function processCpuUs(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** What one W1 run measured: µs per step and the data syncs the store reported during the turn. */
export interface StepRun {
  perStepUs: number;
  /** Process CPU µs per step over the same span as `perStepUs`. */
  cpuUs: number;
  eventsPerS: number;
  syncs: number;
  /** Of `perStepUs`: the wait from `turn/end` to idle (the turn-end checkpoint), spread over the steps. */
  turnEndUs: number;
  /** CPU time `meter` (a database server's) counted over the turn, per step. */
  externalCpuUs: number;
}

/**
 * Runs one turn of `steps` steps of one no-op tool call each (the model is instant); `syncs` counts the
 * store's `onDurable` reports (one per fdatasync, or per WAL-flushed commit) from the prompt to idle.
 */
export async function measureSteps(
  makeStore: (onDurable: () => void) => SessionStore | Promise<SessionStore>,
  steps: number,
  kind: StepTool,
  meter?: () => () => number,
  sdk: StepSdk = sourceSdk,
): Promise<StepRun> {
  let syncs = 0;
  const store = await makeStore(() => syncs++);
  const noop = sdk.defineTool<Record<string, never>>({
    name: 'noop',
    description: 'Does nothing',
    effect: kind === 'read-only' ? 'read' : 'write',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => 'ok',
  });
  const model = new sdk.ScriptedProvider({
    responses: [
      ...Array.from({ length: steps }, (_, index) => ({
        toolCalls: [{ id: `call_${index}`, name: 'noop', arguments: {} }],
      })),
      { text: 'done' },
    ],
  });
  const harness = sdk.createHarness({ providers: [model], tools: [noop as never], store });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'bench-model' });
  let turnEnded = 0;
  harness.hooks.on('session/event', ({ event }) => {
    if (event.type === 'turn/end') turnEnded = performance.now();
  });
  syncs = 0;
  const external = meter?.();
  const cpuStart = processCpuUs();
  const start = performance.now();
  agent.followup('go');
  await agent.whenIdle();
  const end = performance.now();
  const cpuEnd = processCpuUs();
  const externalUs = external?.() ?? 0;
  const elapsed = end - start;
  const turnSyncs = syncs;
  const events = agent.session.length;
  await harness.dispose();
  return {
    perStepUs: (elapsed * 1000) / (steps + 1),
    cpuUs: (cpuEnd - cpuStart) / (steps + 1),
    eventsPerS: events / (elapsed / 1000),
    syncs: turnSyncs,
    turnEndUs: ((end - turnEnded) * 1000) / (steps + 1),
    externalCpuUs: externalUs / (steps + 1),
  };
}

/** One store variant of the per-step comparison. */
interface StepVariant {
  label: string;
  kind: StepTool;
  durability: 'memory' | 'process-crash' | 'power-loss';
}

const stepVariants: readonly StepVariant[] = (['read-only', 'writing'] as const).flatMap((kind) => [
  { label: `memory (baseline), ${kind} tool`, kind, durability: 'memory' as const },
  { label: `disk process-crash, ${kind} tool`, kind, durability: 'process-crash' as const },
  { label: `disk power-loss, ${kind} tool`, kind, durability: 'power-loss' as const },
]);

/** The build the per-step phases run (see the header): its stores and the harness parts of a W1 run. */
interface StepBuild {
  sdk: StepSdk;
  DiskSessionStore: typeof DiskSessionStore;
  MemorySessionStore: typeof MemorySessionStore;
}

async function loadStepBuild(): Promise<StepBuild> {
  // Imported here, not at the top: the cold phases and bench/postgres.ts need no built package.
  const { rein, reinTesting } = await import('./rein-sdk.ts');
  return {
    sdk: {
      createHarness: rein.createHarness,
      defineTool: rein.defineTool,
      ScriptedProvider: reinTesting.ScriptedProvider,
    },
    DiskSessionStore: rein.DiskSessionStore,
    MemorySessionStore: rein.MemorySessionStore,
  };
}

function makeStepStore(
  root: string,
  variant: StepVariant,
  build: StepBuild,
): (onDurable: () => void) => SessionStore {
  return (onDurable) =>
    variant.durability === 'memory'
      ? new build.MemorySessionStore()
      : new build.DiskSessionStore({ root, durability: variant.durability, onDurable });
}

/**
 * Child phase: per-step loop overhead with the memory store (baseline) and the disk store under both
 * durability policies, with a read-only and with a writing tool. Every variant first runs once untimed
 * at the same size (JIT and heap warmed), then the repetitions are interleaved (in rotating order) so a
 * busy moment hurts every variant alike.
 */
async function comparePerStep(root: string, steps: number, reps: number): Promise<void> {
  const build = await loadStepBuild();
  const run = (variant: StepVariant): Promise<StepRun> =>
    measureSteps(makeStepStore(root, variant, build), steps, variant.kind, undefined, build.sdk);
  const runs = new Map<string, StepRun[]>(stepVariants.map((variant) => [variant.label, []]));
  for (const variant of stepVariants) await run(variant);
  for (let rep = 0; rep < reps; rep++) {
    // The order rotates: no variant always runs right after the one that leaves the machine busiest.
    for (let index = 0; index < stepVariants.length; index++) {
      const variant = stepVariants[(rep + index) % stepVariants.length]!;
      runs.get(variant.label)!.push(await run(variant));
    }
  }
  const { reinSource } = await import('./rein-sdk.ts');
  console.log(
    `Loop overhead per step (Rein from ${reinSource === 'dist' ? 'dist/, the built package' : 'src/ through tsx'}), ` +
      `${steps} steps × ${reps} reps in a fresh process, each variant warmed first ` +
      `(median wall µs/step, best in brackets; ratio to the memory store with the same tool; median process ` +
      `CPU µs/step over the same span and its ratio; "pairs": the median of each repetition's own ratio to ` +
      `the memory run of the same repetition, wall / CPU, which a load that drifts between repetitions ` +
      `moves less; fdatasyncs per step counted by onDurable over the whole ` +
      `turn, its end included; the part of the step spent waiting from turn/end to idle, i.e. for the ` +
      `turn-end checkpoint: a write, plus an fdatasync under power-loss):`,
  );
  for (const variant of stepVariants) {
    const rows = runs.get(variant.label)!;
    const value = median(rows.map((row) => row.perStepUs));
    const best = Math.min(...rows.map((row) => row.perStepUs));
    const baseline = runs.get(`memory (baseline), ${variant.kind} tool`)!;
    const memory = median(baseline.map((row) => row.perStepUs));
    const cpu = median(rows.map((row) => row.cpuUs));
    const memoryCpu = median(baseline.map((row) => row.cpuUs));
    const syncs = median(rows.map((row) => row.syncs));
    const turnEnd = median(rows.map((row) => row.turnEndUs));
    // Repetition r of every variant ran in the same rotation, minutes apart at most: a pair shares its load.
    const pairWall = median(rows.map((row, rep) => row.perStepUs / baseline[rep]!.perStepUs));
    const pairCpu = median(rows.map((row, rep) => row.cpuUs / baseline[rep]!.cpuUs));
    const target =
      variant.kind === 'read-only' && variant.durability !== 'memory'
        ? `  (target ≤ ${variant.durability === 'power-loss' ? '1.30' : '1.15'}×)`
        : '';
    console.log(
      `  ${variant.label.padEnd(34)} ${value.toFixed(0).padStart(6)} µs (${best.toFixed(0).padStart(4)})  ` +
        `${(value / memory).toFixed(2)}×  CPU ${cpu.toFixed(0).padStart(4)} µs ${(cpu / memoryCpu).toFixed(2)}×  ` +
        (variant.durability === 'memory'
          ? ''
          : `pairs ${pairWall.toFixed(2)}× / ${pairCpu.toFixed(2)}×  ` +
            `${(syncs / steps).toFixed(3)} fdatasyncs/step (${syncs} in the turn), turn-end wait ` +
            `${turnEnd.toFixed(0)} µs/step`) +
        target,
    );
  }
}

/** Child phase: one turn of `steps` steps on the disk store (run under strace by the parent). */
async function tracedTurn(root: string, steps: number, variant: StepVariant): Promise<void> {
  const build = await loadStepBuild();
  await measureSteps(makeStepStore(root, variant, build), steps, variant.kind, undefined, build.sdk);
}

/** Session-file system calls that strace saw: data writes and data syncs. */
export interface TracedCalls {
  writes: number;
  syncs: number;
}

/** Traced session-file calls of one variant: per step, and over the whole shorter run. */
interface TracedVariant {
  perStep: TracedCalls;
  wholeRun: TracedCalls;
}

// The calls that put a session file's bytes into the OS or onto the disk. With `-y` strace names each
// descriptor's path, so calls on the session file (`<id>.jsonl`) are told apart from the process's
// others (stdout, the thread pool's pipes, snapshots); a call split by `-f` into "unfinished" and
// "resumed" halves is counted once, at its first half, which carries the descriptor.
const tracedCalls = ['write', 'pwrite64', 'writev', 'fdatasync', 'fsync'];
const sessionFileCall = /^\d+\s+(write|pwrite64|writev|fdatasync|fsync)\(\d+<[^>]*\.jsonl>/;

/** Counts the session-file writes and syncs in an `strace -f -y -o` trace. */
function countSessionFileCalls(trace: string): TracedCalls {
  let writes = 0;
  let syncs = 0;
  for (const line of trace.split('\n')) {
    const call = sessionFileCall.exec(line)?.[1];
    if (call === 'fdatasync' || call === 'fsync') syncs++;
    else if (call !== undefined) writes++;
  }
  return { writes, syncs };
}

/**
 * The session-file writes and syncs of a whole process per step, traced by strace (independent of
 * Rein's own reports): the difference between a run of 2N steps and one of N steps, divided by N, so
 * creation, turn end and close cancel out. Undefined when strace is not installed.
 */
function tracedCallsPerStep(directory: string, steps: number): Map<string, TracedVariant> | undefined {
  if (spawnSync('strace', ['-V']).status !== 0) return undefined;
  const script = fileURLToPath(import.meta.url);
  const counts = new Map<string, TracedVariant>();
  for (const variant of stepVariants) {
    if (variant.durability === 'memory') continue;
    const calls: TracedCalls[] = [];
    for (const count of [steps, 2 * steps]) {
      const root = join(directory, `traced-${count}-${stepVariants.indexOf(variant)}`);
      const output = join(directory, `trace-${count}-${stepVariants.indexOf(variant)}.txt`);
      const child = spawnSync(
        'strace',
        [
          '-f',
          '-y',
          '-s',
          '0',
          '-o',
          output,
          '-e',
          `trace=${tracedCalls.join(',')}`,
          process.execPath,
          '--import',
          'tsx',
          script,
          '--phase=traced',
          `--root=${root}`,
          `--steps=${count}`,
          `--variant=${stepVariants.indexOf(variant)}`,
        ],
        { encoding: 'utf8' },
      );
      if (child.status !== 0) throw new Error(`traced run failed: ${child.stderr}`);
      calls.push(countSessionFileCalls(readFileSync(output, 'utf8')));
    }
    counts.set(variant.label, {
      perStep: {
        writes: (calls[1]!.writes - calls[0]!.writes) / steps,
        syncs: (calls[1]!.syncs - calls[0]!.syncs) / steps,
      },
      wholeRun: calls[0]!,
    });
  }
  return counts;
}

async function main(): Promise<void> {
  const events = option('events', 100_000);
  const steps = option('steps', 500);
  const reps = option('reps', 5);
  const directory = mkdtempSync(join(tmpdir(), 'rein-bench-persistence-'));
  try {
    const root = join(directory, 'sessions');
    const startBuild = performance.now();
    const log = buildLog(events);
    const chunkShare = log.filter((event) => event.type === 'assistant/chunk').length / log.length;
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'bench' }, { seed: log });
    await store.release(session);
    const bytes = statSync(join(root, 'bench.jsonl')).size;
    console.log(
      `Session of ${log.length} events (${(chunkShare * 100).toFixed(0)}% chunks), ${(bytes / 1e6).toFixed(1)} MB on disk, ` +
        `built and written in ${((performance.now() - startBuild) / 1000).toFixed(1)} s (Node ${process.version})\n`,
    );

    const script = fileURLToPath(import.meta.url);
    const phases: [ColdPhase, string][] = [
      ['read', 'read (parse only)'],
      ['open', 'open (parse, validate, lock, release)'],
      ['resume', 'harness.resumeAgent + dispose'],
      ['baseline', 'in-memory construction (baseline)'],
    ];
    const cold = new Map<ColdPhase, { wallMs: number; cpuMs: number }[]>(
      phases.map(([phase]) => [phase, []]),
    );
    for (let rep = 0; rep < reps; rep++) {
      for (const [phase] of phases) {
        const child = spawnSync(
          process.execPath,
          ['--import', 'tsx', script, '--phase=load', `--what=${phase}`, `--root=${root}`],
          { encoding: 'utf8' },
        );
        if (child.status !== 0) throw new Error(`cold ${phase} failed: ${child.stderr}`);
        cold.get(phase)!.push(JSON.parse(child.stdout) as { wallMs: number; cpuMs: number });
      }
    }
    const baseline = median(cold.get('baseline')!.map((row) => row.wallMs));
    console.log(
      `Cold load, one fresh process per measurement, ${reps} each (median; wall ratio to the in-memory baseline):`,
    );
    for (const [phase, label] of phases) {
      const wall = median(cold.get(phase)!.map((row) => row.wallMs));
      const cpu = median(cold.get(phase)!.map((row) => row.cpuMs));
      console.log(
        `  ${label.padEnd(40)} ${wall.toFixed(0).padStart(6)} ms wall ${cpu.toFixed(0).padStart(6)} ms CPU   ${(wall / baseline).toFixed(2)}×`,
      );
    }
    console.log('');

    // The per-step comparison runs in a fresh process of its own: this one still holds the 100k-event
    // log, whose collection would be charged to whichever variant happened to be running.
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        script,
        '--phase=steps',
        `--root=${join(directory, 'steps')}`,
        `--steps=${steps}`,
        `--reps=${reps}`,
      ],
      { encoding: 'utf8' },
    );
    if (child.status !== 0) throw new Error(`per-step phase failed: ${child.stderr}`);
    process.stdout.write(child.stdout);
    const tracedSteps = Math.min(steps, 200);
    const traced = tracedCallsPerStep(directory, tracedSteps);
    if (traced === undefined) console.log('\n(strace is not installed: no traced system call counts)');
    else {
      console.log(
        `\nSession-file system calls per step traced by strace -f -y (${tracedCalls.join(', ')}; a ` +
          `${2 * tracedSteps}-step turn minus a ${tracedSteps}-step one, per step; in brackets the whole ` +
          `${tracedSteps}-step process, creation and close included):`,
      );
      for (const [label, { perStep, wholeRun }] of traced)
        console.log(
          `  ${label.padEnd(36)} ${perStep.writes.toFixed(3)} writes  ${perStep.syncs.toFixed(3)} fdatasyncs  ` +
            `(${wholeRun.writes} writes, ${wholeRun.syncs} syncs)`,
        );
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  if (process.argv.includes('--phase=traced')) {
    const root = process.argv.find((arg) => arg.startsWith('--root='))!.slice('--root='.length);
    await tracedTurn(root, option('steps', 200), stepVariants[option('variant', 1)]!);
  } else if (process.argv.includes('--phase=steps')) {
    const root = process.argv.find((arg) => arg.startsWith('--root='))!.slice('--root='.length);
    await comparePerStep(root, option('steps', 500), option('reps', 5));
  } else if (process.argv.includes('--phase=load')) {
    const root = process.argv.find((arg) => arg.startsWith('--root='))!.slice('--root='.length);
    const what = process.argv.find((arg) => arg.startsWith('--what='))!.slice('--what='.length);
    await measureColdLoad(root, what as ColdPhase);
  } else {
    await main();
  }
}
