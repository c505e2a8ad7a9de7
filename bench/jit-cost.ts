// `npm run bench:jit -- [--subjects=rein,pi] [--sizes=100,1000] [--reps=5]`: where a W1 run's CPU goes
// beyond the steady step, for each subject in fresh processes interleaved rep by rep (bench/jit-cell.ts).
// Three runs per cell:
//   plain     V8's defaults: wall, the median step, and CPU of the main thread and of the other threads
//             (from /proc in 10 ms ticks: a run of 100 steps spans only a few);
//   compile   --no-concurrent-recompilation --trace-opt --trace-deopt: the optimizing compiler's work
//             during the run (its own timings of every job, summed, which is then all on the main
//             thread), the number of jobs and of deoptimizations, and the functions that cost most;
//   no-opt    --no-opt: the median step and the wall time with no optimizing compiler, i.e. the cost of
//             the code a step runs in the interpreter and baseline tiers, where every process starts; the
//             last ratio sets that wall time against the reference subject's with V8's defaults.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JitCellResult } from './jit-cell.ts';
import { formatNumber, markdownTable, median } from './stats.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const option = (name: string): string | undefined =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const subjects = (option('subjects') ?? 'rein,pi').split(',');
const sizes = (option('sizes') ?? '100,1000').split(',');
const reps = Number(option('reps') ?? 5);

interface CompileTrace {
  compileMs: number;
  jobs: number;
  deopts: number;
  byFunction: Map<string, number>;
}

const modes = {
  plain: [] as string[],
  compile: ['--no-concurrent-recompilation', '--trace-opt', '--trace-deopt'],
  'no-opt': ['--no-opt'],
} as const;
type Mode = keyof typeof modes;

function runCell(
  subject: string,
  steps: string,
  mode: Mode,
): Promise<{ result: JitCellResult; trace: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', ...modes[mode], '--import', 'tsx', join(benchDir, 'jit-cell.ts'), subject, steps],
      { cwd: dirname(benchDir), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (data: string) => (output += data));
    child.on('close', (code) => {
      const line = output.split('\n').find((text) => text.startsWith('JIT-CELL '));
      const start = output.indexOf('JIT-MEASURE-START\n');
      if (code === 0 && line !== undefined && start >= 0)
        done({ result: JSON.parse(line.slice(9)) as JitCellResult, trace: output.slice(start) });
      else fail(new Error(`${subject} ${mode} at N = ${steps}: the cell exited with ${code}`));
    });
  });
}

// V8 (Node 20): "completed compiling 0x… <JSFunction name (sfi = 0x…)> (target TURBOFAN) - took a, b, c ms".
const compiledLine =
  /completed compiling 0x[0-9a-f]+ <JSFunction (\S*) [^>]*> \(target \w+\) - took ([\d.]+), ([\d.]+), ([\d.]+) ms/g;

function parseTrace(trace: string): CompileTrace {
  const byFunction = new Map<string, number>();
  let compileMs = 0;
  let jobs = 0;
  for (const match of trace.matchAll(compiledLine)) {
    const ms = Number(match[2]) + Number(match[3]) + Number(match[4]);
    const name = match[1] ?? '(anonymous)';
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    compileMs += ms;
    jobs++;
  }
  const deopts = trace.split('[bailout (kind: ').length - 1;
  return { compileMs, jobs, deopts, byFunction };
}

const loads: number[] = [];
const rows: string[][] = [];
const ratioRows: string[][] = [];
const topLines: string[] = [];
for (const steps of sizes) {
  const plain = new Map<string, JitCellResult[]>(subjects.map((name) => [name, []]));
  const compile = new Map<string, CompileTrace[]>(subjects.map((name) => [name, []]));
  const unoptimized = new Map<string, JitCellResult[]>(subjects.map((name) => [name, []]));
  for (let rep = 0; rep < reps; rep++) {
    loads.push(loadavg()[0]!);
    for (const subject of subjects) {
      plain.get(subject)!.push((await runCell(subject, steps, 'plain')).result);
      compile.get(subject)!.push(parseTrace((await runCell(subject, steps, 'compile')).trace));
      unoptimized.get(subject)!.push((await runCell(subject, steps, 'no-opt')).result);
    }
  }
  const perStep = (ms: number): number => (ms * 1000) / (Number(steps) + 1);
  for (const subject of subjects) {
    const runs = plain.get(subject)!;
    const traces = compile.get(subject)!;
    rows.push([
      steps,
      subject,
      formatNumber(median(runs.map((run) => perStep(run.wallMs)))),
      formatNumber(median(runs.map((run) => run.medianStepUs))),
      runs[0]!.mainThreadCpuMs === undefined
        ? '–'
        : `${formatNumber(median(runs.map((run) => perStep(run.mainThreadCpuMs!))))} / ${formatNumber(median(runs.map((run) => perStep(run.otherThreadsCpuMs!))))}`,
      formatNumber(median(traces.map((trace) => trace.compileMs))),
      formatNumber(median(traces.map((trace) => perStep(trace.compileMs)))),
      `${formatNumber(median(traces.map((trace) => trace.jobs)))} / ${formatNumber(median(traces.map((trace) => trace.deopts)))}`,
      formatNumber(median(unoptimized.get(subject)!.map((run) => run.medianStepUs))),
      formatNumber(median(unoptimized.get(subject)!.map((run) => perStep(run.wallMs)))),
    ]);
    const totals = new Map<string, number>();
    for (const trace of traces)
      for (const [name, ms] of trace.byFunction) totals.set(name, (totals.get(name) ?? 0) + ms / reps);
    const top = [...totals].sort((left, right) => right[1] - left[1]).slice(0, 12);
    topLines.push(
      `- N = ${steps}, ${subject}: ${top.map(([name, ms]) => `\`${name}\` ${formatNumber(ms)}`).join(', ')}`,
    );
  }
  // Per-rep ratios of every subject to the last one named (pi by default).
  const reference = subjects.at(-1)!;
  for (const subject of subjects.slice(0, -1)) {
    const ratio = (of: (index: number, name: string) => number): string =>
      `${formatNumber(median(Array.from({ length: reps }, (_, index) => of(index, subject) / of(index, reference))))}×`;
    ratioRows.push([
      steps,
      `${subject} ÷ ${reference}`,
      ratio((index, name) => plain.get(name)![index]!.wallMs),
      ratio((index, name) => plain.get(name)![index]!.medianStepUs),
      ratio((index, name) => compile.get(name)![index]!.compileMs),
      ratio((index, name) => unoptimized.get(name)![index]!.medianStepUs),
      ratio((index, name) => unoptimized.get(name)![index]!.wallMs),
      // Without its optimizing compiler against the reference with V8's defaults: what the compiler's
      // work costs this subject's run beside what it gains the reference's.
      `${formatNumber(median(Array.from({ length: reps }, (_, index) => unoptimized.get(subject)![index]!.wallMs / plain.get(reference)![index]!.wallMs)))}×`,
    ]);
  }
}
process.stdout.write(
  `W1 after a 20-step warm-up, ${reps} interleaved fresh processes per subject, size and mode, medians; ` +
    `load average (1 min) ${formatNumber(Math.min(...loads))}–${formatNumber(Math.max(...loads))} (Node ${process.version})\n\n` +
    `${markdownTable(
      [
        'N',
        'subject',
        'wall µs/step',
        'median step µs',
        'CPU µs/step: main / other threads',
        'optimizing compiler ms in the run',
        'its µs/step',
        'jobs / deopts',
        'median step µs, --no-opt',
        'wall µs/step, --no-opt',
      ],
      rows,
    )}\n\n` +
    `Per-rep ratios (median):\n\n` +
    `${markdownTable(
      [
        'N',
        'ratio',
        'wall',
        'median step',
        'optimizing compiler ms',
        'median step, --no-opt',
        'wall, --no-opt',
        'wall, --no-opt ÷ the reference with the defaults',
      ],
      ratioRows,
    )}\n\n` +
    `Optimizing compiler ms by function (mean over the reps):\n\n${topLines.join('\n')}\n`,
);
