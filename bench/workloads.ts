// The workloads W1–W4, each measured on one subject inside one fresh process (see cell.ts).
import { performance } from 'node:perf_hooks';
import { macrotask, modelClock } from './fake-model.ts';
import type { BenchSubject, BenchTool, FakeReply, FakeScript, ParallelMode } from './subject.ts';
import { parallelBound } from './subject.ts';

/** One measured cell's numbers (names are the table's columns). */
export type CellResult = Record<string, number | boolean | string>;

const mebibyte = 1024 * 1024;
const deltaText = 'abcdefgh';

/** Runs a full garbage collection (the cell runs under `--expose-gc`). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run the cell with node --expose-gc');
  gc();
  gc();
}

export function stepsScript(steps: number): FakeScript {
  const done: FakeReply = { kind: 'text', deltas: ['done'] };
  return (call) =>
    call < steps ? { kind: 'tools', calls: [{ id: `call_${call}`, name: 'noop', arguments: '{}' }] } : done;
}

/**
 * W1: one prompt, one no-op tool call per step for `steps` steps, then an answer, after an untimed
 * warm-up run of `warmSteps` steps (20: warms the JIT; `steps`: warms the heap to its working size too). Loop overhead per
 * model request (fake-model time subtracted) and, from the tool's timestamps, the growth ratio of the
 * median step cost in the last tenth over the first tenth (and the summed variant, for reference).
 */
export async function measureSteps(
  subject: BenchSubject,
  steps: number,
  warmSteps = 20,
): Promise<CellResult> {
  const noopTool = (marks: number[]): BenchTool => ({
    name: 'noop',
    execute: () => {
      marks.push(performance.now());
      return 'ok';
    },
  });
  await subject.runPrompt({ script: stepsScript(warmSteps), tool: noopTool([]) });
  const marks: number[] = [];
  collectGarbage();
  modelClock.reset();
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  await subject.runPrompt({ script: stepsScript(steps), tool: noopTool(marks) });
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  if (marks.length !== steps) throw new Error(`expected ${steps} tool executions, saw ${marks.length}`);
  const loopMs = wallMs - modelClock.totalMs;
  const result: CellResult = {
    usPerStep: (loopMs * 1000) / (steps + 1),
    // The process's CPU time (every thread: JIT compiler and collector helpers too), fake model included:
    // on a shared machine it moves less than wall time with the other tenants' load.
    cpuUsPerStep: (cpu.user + cpu.system) / (steps + 1),
    wallMs,
    modelMs: modelClock.totalMs,
  };
  if (steps >= 10) result.medianStepUs = medianStepUs(marks);
  if (steps >= 100) {
    result.growth = growthRatio(marks);
    result.summedGrowth = summedGrowthRatio(marks);
  }
  return result;
}

/**
 * Step k costs marks[k] − marks[k−1]; the ratio of the last tenth's median step cost to the first tenth's.
 * Medians, not sums: one collector pause in a tenth is not growth, a slower typical step is.
 */
export function growthRatio(marks: readonly number[]): number {
  const tenth = Math.floor(marks.length / 10);
  const first: number[] = [];
  const last: number[] = [];
  for (let k = 1; k <= tenth; k++) first.push(marks[k]! - marks[k - 1]!);
  for (let k = marks.length - tenth; k < marks.length; k++) last.push(marks[k]! - marks[k - 1]!);
  return medianOf(last) / medianOf(first);
}

/** The growth ratio as the issue first defined it: the last tenth's summed step cost over the first's. */
export function summedGrowthRatio(marks: readonly number[]): number {
  const tenth = Math.floor(marks.length / 10);
  let first = 0;
  let last = 0;
  for (let k = 1; k <= tenth; k++) first += marks[k]! - marks[k - 1]!;
  for (let k = marks.length - tenth; k < marks.length; k++) last += marks[k]! - marks[k - 1]!;
  return last / first;
}

/** The typical step: the median of marks[k] − marks[k−1] in µs (no setup, no single pause). */
export function medianStepUs(marks: readonly number[]): number {
  const costs: number[] = [];
  for (let k = 1; k < marks.length; k++) costs.push((marks[k]! - marks[k - 1]!) * 1000);
  return medianOf(costs);
}

function medianOf(values: number[]): number {
  const sorted = values.sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * W2: one step streaming `count` text deltas of 8 bytes (paced: a macrotask every 64 deltas) to a
 * subscriber; deltas per second and the peak heap above the pre-run baseline, sampled every 256 deltas.
 */
export async function measureStream(subject: BenchSubject, count: number): Promise<CellResult> {
  const warmDeltas: readonly string[] = new Array<string>(1000).fill(deltaText);
  await subject.runPrompt({
    script: () => ({ kind: 'text', deltas: warmDeltas }),
    tool: idleTool,
    onTextDelta: () => undefined,
  });
  const deltas: readonly string[] = new Array<string>(count).fill(deltaText);
  const reply: FakeReply = { kind: 'text', deltas };
  let seen = 0;
  collectGarbage();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  modelClock.reset();
  const start = performance.now();
  await subject.runPrompt({
    script: () => reply,
    tool: idleTool,
    onTextDelta: () => {
      seen++;
      if ((seen & 255) === 0) {
        const used = process.memoryUsage().heapUsed;
        if (used > peak) peak = used;
      }
    },
  });
  const wallMs = performance.now() - start;
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  if (seen !== count) throw new Error(`expected ${count} deltas at the subscriber, saw ${seen}`);
  return {
    deltasPerSecond: count / ((wallMs - modelClock.totalMs) / 1000),
    peakHeapMiB: (peak - baseline) / mebibyte,
    wallMs,
  };
}

const idleTool: BenchTool = { name: 'noop', execute: () => 'ok' };
const parallelCalls = 16;

function parallelScript(): FakeScript {
  const calls = Array.from({ length: parallelCalls }, (_, index) => ({
    id: `call_${index}`,
    name: 'wait',
    arguments: JSON.stringify({ index }),
  }));
  const done: FakeReply = { kind: 'text', deltas: ['done'] };
  return (call) => (call === 0 ? { kind: 'tools', calls } : done);
}

function sleepTool(durationOf: (index: number) => number): BenchTool {
  return {
    name: 'wait',
    execute: (args) => {
      const index = args.index ?? -1;
      return new Promise<string>((resolve) => setTimeout(() => resolve(`r${index}`), durationOf(index)));
    },
  };
}

/**
 * W3: one step with 16 concurrency-safe calls sleeping 50 ms each, scheduled in `mode`; the makespan
 * from the first request reaching the model to the second (which carries the results), over its floor.
 */
export async function measureParallel(subject: BenchSubject, mode: ParallelMode): Promise<CellResult> {
  if (!subject.parallelModes.includes(mode)) return { available: false };
  await subject.runPrompt({ script: parallelScript(), tool: sleepTool(() => 1), parallel: mode });
  const arrivals: number[] = [];
  collectGarbage();
  await subject.runPrompt({
    script: parallelScript(),
    tool: sleepTool(() => 50),
    parallel: mode,
    onRequest: () => arrivals.push(performance.now()),
  });
  if (arrivals.length !== 2) throw new Error(`expected 2 requests, saw ${arrivals.length}`);
  const makespanMs = arrivals[1]! - arrivals[0]!;
  const floorMs = 50 * Math.ceil(parallelCalls / Math.min(parallelBound[mode], parallelCalls));
  return { makespanMs, floorMs, overFloor: makespanMs / floorMs };
}

/**
 * W3 probe: the same 16 calls finishing in reverse order (call i sleeps (16 − i) × 4 ms) in the widest
 * mode the subject offers; the next request must carry the results in model order.
 */
export async function probeResultOrder(subject: BenchSubject): Promise<CellResult> {
  const mode = subject.parallelModes[0]!;
  let seen: string[] = [];
  await subject.runPrompt({
    script: parallelScript(),
    tool: sleepTool((index) => (parallelCalls - index) * 4),
    parallel: mode,
    onRequest: (call, toolResults) => {
      if (call === 1) seen = toolResults();
    },
  });
  const expected = Array.from({ length: parallelCalls }, (_, index) => `r${index}`);
  return { mode, modelOrder: seen.join(',') === expected.join(','), seen: seen.join(',') };
}

/**
 * W4: `turns` turns of a short message and a short reply in one conversation; median turn time of the
 * first and last 50 turns and the heap retained after GC (the conversation still alive).
 */
export async function measureLongSession(subject: BenchSubject, turns: number): Promise<CellResult> {
  const reply: FakeReply = { kind: 'text', deltas: ['ok'] };
  const script: FakeScript = () => reply;
  const warm = await subject.openConversation(script, idleTool);
  for (let turn = 0; turn < 50; turn++) await warm.turn('hi');
  await warm.close();
  collectGarbage();
  const conversation = await subject.openConversation(script, idleTool);
  await macrotask();
  collectGarbage();
  const baseline = process.memoryUsage().heapUsed;
  const times = new Float64Array(turns);
  for (let turn = 0; turn < turns; turn++) {
    const start = performance.now();
    await conversation.turn('hi');
    times[turn] = performance.now() - start;
  }
  collectGarbage();
  const retained = process.memoryUsage().heapUsed - baseline;
  const window = Math.min(50, Math.floor(turns / 2));
  const mean = (from: number, to: number): number => {
    let sum = 0;
    for (let index = from; index < to; index++) sum += times[index]!;
    return sum / (to - from);
  };
  // Medians: one collector pause among 50 turns says nothing about the typical turn; means kept for reference.
  const firstUs = medianOf(Array.from(times.subarray(0, window))) * 1000;
  const lastUs = medianOf(Array.from(times.subarray(turns - window, turns))) * 1000;
  await conversation.close();
  return {
    firstTurnsUs: firstUs,
    lastTurnsUs: lastUs,
    growth: lastUs / firstUs,
    firstTurnsMeanUs: mean(0, window) * 1000,
    lastTurnsMeanUs: mean(turns - window, turns) * 1000,
    retainedMiB: retained / mebibyte,
  };
}
