// `npx tsx bench/gc-survival.ts [--steps=1000] [--reps=3] [--subjects=rein,pi]`: what survives the young
// generation in W1. Runs the W1 cell (bench/cell.ts) in fresh processes under `--trace-gc-nvp` and sums,
// over the scavenges of the measured run (those after the cell's forced full collection), the bytes that
// survived a scavenge and the bytes promoted to the old generation, beside the cell's wall and CPU µs a
// step. A loop whose per-step objects die young promotes little more than what it keeps (its log).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatNumber, markdownTable, median } from './stats.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const option = (name: string, fallback: string): string =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const steps = option('steps', '1000');
const reps = Number(option('reps', '3'));
const subjects = option('subjects', 'rein,pi').split(',');
const mebibyte = 1024 * 1024;

interface Sample {
  scavenges: number;
  survivedMiB: number;
  promotedMiB: number;
  usPerStep: number;
  cpuUsPerStep: number;
}

function runTraced(subject: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--trace-gc-nvp',
        '--import',
        'tsx',
        join(benchDir, 'cell.ts'),
        subject,
        'steps',
        steps,
      ],
      { cwd: dirname(benchDir), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.on('data', (data: Buffer) => (output += data.toString()));
    child.on('close', (code) => {
      let scavenges = 0;
      let survived = 0;
      let promoted = 0;
      for (const line of output.split('\n')) {
        if (line.startsWith('CELL ')) {
          const cell = JSON.parse(line.slice(5)) as { usPerStep: number; cpuUsPerStep: number };
          resolve({
            scavenges,
            survivedMiB: survived / mebibyte,
            promotedMiB: promoted / mebibyte,
            usPerStep: cell.usPerStep,
            cpuUsPerStep: cell.cpuUsPerStep,
          });
          return;
        }
        // The cell's forced full collection precedes the measured run: count only what follows it.
        if (line.includes(' gc=mc ')) {
          scavenges = 0;
          survived = 0;
          promoted = 0;
        } else if (line.includes(' gc=s ')) {
          scavenges++;
          survived += Number(/ new_space_survived=(\d+)/.exec(line)?.[1] ?? 0);
          promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
        }
      }
      reject(new Error(`${subject}: the cell exited with ${code} and printed no result`));
    });
  });
}

const samples = new Map<string, Sample[]>(subjects.map((subject) => [subject, []]));
// Interleaved, like bench/run.ts: a busy moment of the machine hurts every subject alike.
for (let rep = 0; rep < reps; rep++) {
  for (const subject of subjects) samples.get(subject)!.push(await runTraced(subject));
}
const rows = subjects.map((subject) => {
  const runs = samples.get(subject)!;
  const of = (pick: (sample: Sample) => number): string => formatNumber(median(runs.map(pick)));
  return [
    subject,
    of((sample) => sample.scavenges),
    of((sample) => sample.survivedMiB),
    of((sample) => sample.promotedMiB),
    of((sample) => sample.usPerStep),
    of((sample) => sample.cpuUsPerStep),
  ];
});
process.stdout.write(
  `W1 at N = ${steps}, ${reps} fresh processes per subject (medians), scavenges of the measured run (Node ${process.version})\n\n` +
    `${markdownTable(['subject', 'scavenges', 'survived MiB', 'promoted MiB', 'µs/step (wall)', 'CPU µs/step'], rows)}\n`,
);
