// `npx tsx bench/loop-pairs.ts --baseline=DIR [--sizes=100,1000] [--reps=7]` (after `npm run build:js`): the W1 cell (bench/cell.ts
// `steps N`, 20 warm-up steps) for this tree's Rein (the built package, and the sources through tsx), a
// baseline checkout's Rein (its own bench/cell.ts, say `git archive main` with node_modules linked) and pi, interleaved rep by rep so that a busy moment
// of the shared machine hits all three alike. Prints medians of process CPU µs a step (every thread),
// wall µs a step and the median step, and the medians of the per-rep ratios (this ÷ baseline, this ÷ pi).
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatNumber, markdownTable, median } from './stats.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const option = (name: string): string | undefined =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const baselineOption = option('baseline');
if (baselineOption === undefined)
  throw new Error('--baseline=DIR (a checkout of the before commit) is required');
const baseline = resolve(baselineOption);
const sizes = (option('sizes') ?? '100,1000').split(',');
const reps = Number(option('reps') ?? 7);

interface Sample {
  cpuUsPerStep: number;
  usPerStep: number;
  medianStepUs: number;
}

// `rein` is the built package (bench/rein-sdk.ts), `rein (src)` the sources through tsx; a baseline runs
// whatever its own bench/cell.ts runs (the sources, for trees older than bench/rein-sdk.ts).
const variants = [
  { name: 'rein', root: dirname(benchDir), subject: 'rein', source: 'dist' },
  { name: 'rein (src)', root: dirname(benchDir), subject: 'rein', source: 'src' },
  { name: 'rein@base', root: baseline, subject: 'rein', source: 'dist' },
  { name: 'pi', root: dirname(benchDir), subject: 'pi', source: 'dist' },
];

function runCell(root: string, subject: string, steps: string, source: string): Promise<Sample> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', join(root, 'bench', 'cell.ts'), subject, 'steps', steps],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, REIN_BENCH_SOURCE: source } },
    );
    let output = '';
    child.stdout.on('data', (data: Buffer) => (output += data.toString()));
    child.on('close', (code) => {
      const line = output.split('\n').find((text) => text.startsWith('CELL '));
      if (code === 0 && line !== undefined) done(JSON.parse(line.slice(5)) as Sample);
      else fail(new Error(`${root} ${subject} at N = ${steps}: the cell exited with ${code}`));
    });
  });
}

const loads: number[] = [];
const rows: string[][] = [];
for (const steps of sizes) {
  const samples = new Map<string, Sample[]>(variants.map((variant) => [variant.name, []]));
  for (let rep = 0; rep < reps; rep++) {
    loads.push(loadavg()[0]!);
    for (const variant of variants)
      samples.get(variant.name)!.push(await runCell(variant.root, variant.subject, steps, variant.source));
  }
  const cpu = (name: string): number[] => samples.get(name)!.map((sample) => sample.cpuUsPerStep);
  const ratio = (of: string, over: string): string =>
    `${formatNumber(median(cpu(of).map((value, rep) => value / cpu(over)[rep]!)))}×`;
  for (const variant of variants) {
    const runs = samples.get(variant.name)!;
    rows.push([
      steps,
      variant.name,
      formatNumber(median(cpu(variant.name))),
      formatNumber(median(runs.map((sample) => sample.usPerStep))),
      formatNumber(median(runs.map((sample) => sample.medianStepUs))),
      variant.name.startsWith('rein') && variant.name !== 'rein@base'
        ? `${ratio(variant.name, 'rein@base')} base, ${ratio(variant.name, 'pi')} pi`
        : '',
    ]);
  }
}
process.stdout.write(
  `W1, ${reps} interleaved fresh processes per variant and size, medians; load average (1 min) ` +
    `${formatNumber(Math.min(...loads))}–${formatNumber(Math.max(...loads))} (Node ${process.version})\n\n` +
    `${markdownTable(['N', 'variant', 'CPU µs/step', 'wall µs/step', 'median step µs', 'CPU ratio per rep (median)'], rows)}\n`,
);
