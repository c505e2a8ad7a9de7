// `npm run bench:allocation -- [--sizes=100,1000] [--reps=3] [--subjects=rein,pi] [--baseline=DIR]`: bytes
// allocated and bytes retained per W1 step, Rein beside pi in the same run. Each cell is a fresh process
// (bench/allocation-cell.ts) whose young generation is large enough that no collection runs during the
// measured turn, so the heap's growth over the turn is what the loop allocated; retained is what is
// still reachable after a full collection with the conversation open (the log and its indexes).
// `--baseline=DIR` adds `rein@base`: the Rein adapter of another checkout (say `git archive main`), so its
// src/, measured by this tree's cell. Repetitions are interleaved across subjects.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatNumber, markdownTable, median } from './stats.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const option = (name: string): string | undefined =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const sizes = (option('sizes') ?? '100,1000').split(',');
const reps = Number(option('reps') ?? 3);
const baseline = option('baseline');
const subjects = [...(option('subjects') ?? 'rein,pi').split(','), ...(baseline ? ['rein@base'] : [])];
// MiB per semi-space: room for the largest measured turn (about 55 KiB a step × 1,000 steps) with no scavenge.
const semiSpaceMiB = 256;
const kibibyte = 1024;

interface Sample {
  allocatedBytesPerStep: number;
  retainedBytesPerStep: number;
  collectionsDuringRun: number;
}

function runCell(subject: string, steps: string): Promise<Sample> {
  const [name, root] = subject === 'rein@base' ? ['rein', resolve(baseline!)] : [subject, undefined];
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        `--min-semi-space-size=${semiSpaceMiB}`,
        `--max-semi-space-size=${semiSpaceMiB}`,
        '--import',
        'tsx',
        join(benchDir, 'allocation-cell.ts'),
        name!,
        steps,
        ...(root === undefined ? [] : [root]),
      ],
      { cwd: dirname(benchDir), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.on('data', (data: Buffer) => (output += data.toString()));
    child.on('close', (code) => {
      const line = output.split('\n').find((text) => text.startsWith('CELL '));
      if (code === 0 && line !== undefined) done(JSON.parse(line.slice(5)) as Sample);
      else fail(new Error(`${subject} at N = ${steps}: the cell exited with ${code}`));
    });
  });
}

const rows: string[][] = [];
for (const steps of sizes) {
  const samples = new Map<string, Sample[]>(subjects.map((subject) => [subject, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (const subject of subjects) samples.get(subject)!.push(await runCell(subject, steps));
  }
  const allocatedOf = (subject: string): number =>
    median(samples.get(subject)!.map((sample) => sample.allocatedBytesPerStep));
  for (const subject of subjects) {
    const runs = samples.get(subject)!;
    const allocated = runs.map((sample) => sample.allocatedBytesPerStep / kibibyte);
    rows.push([
      steps,
      subject,
      formatNumber(median(allocated)),
      `${formatNumber(Math.min(...allocated))}–${formatNumber(Math.max(...allocated))}`,
      formatNumber(median(runs.map((sample) => sample.retainedBytesPerStep / kibibyte))),
      subject === 'pi' ? '1' : `${formatNumber(allocatedOf(subject) / allocatedOf('pi'))}×`,
      String(Math.max(...runs.map((sample) => sample.collectionsDuringRun))),
    ]);
  }
}
process.stdout.write(
  `W1 allocation per step (a step = one request: N steps and the answer), ${reps} fresh processes per cell, ` +
    `medians (Node ${process.version})\n\n` +
    `${markdownTable(['N', 'subject', 'allocated KiB/step', 'range', 'retained KiB/step', 'allocated ÷ pi', 'collections in the run (max)'], rows)}\n`,
);
