// `npm run bench:loop`: Rein's per-step loop overhead with its own ScriptedProvider at 1, 10, 100 and
// 1000 steps (one fresh process per cell), in µs per step, and the growth ratio of the last tenth's step
// cost over the first tenth's at 1000 steps, which must stay ≤ 1.2 because derivation is incremental.
// The gated ratio compares median step costs (robust to a single collector pause); the summed ratio
// (total cost of the last tenth over the first) is printed beside it for reference. µs/step is the whole
// run (agent setup, first request, collector pauses) over the steps; the median step is the typical one.
// Each cell first runs the same number of steps untimed, so the JIT is warm and the young generation has
// grown to its working size: growth then measures the loop, not the heap's first growth into fresh pages
// (on a virtual machine a page's first touch costs ~13 µs; see bench/page-faults.ts and bench/README.md).
import { runCell } from './run-cell.ts';
import { formatNumber, markdownTable, median, minimum } from './stats.ts';

const reps = Number(process.argv.find((arg) => arg.startsWith('--reps='))?.slice(7) ?? 5);
const sizes = ['1', '10', '100', '1000'];
const rows: string[][] = [];
let worstGrowth = 0;
for (const steps of sizes) {
  const perStep: number[] = [];
  const typical: number[] = [];
  const growth: number[] = [];
  const summed: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const outcome = await runCell('rein-scripted', 'steps-warm', steps);
    if (!outcome.ok) throw new Error(`steps ${steps}: ${outcome.error}`);
    perStep.push(outcome.cell.usPerStep as number);
    if (typeof outcome.cell.medianStepUs === 'number') typical.push(outcome.cell.medianStepUs);
    // Tenths of shorter runs are a handful of steps, too few to tell growth from noise.
    if (Number(steps) >= 1000 && typeof outcome.cell.growth === 'number') {
      growth.push(outcome.cell.growth);
      summed.push(outcome.cell.summedGrowth as number);
    }
  }
  const growthMedian = median(growth);
  if (Number.isFinite(growthMedian)) worstGrowth = Math.max(worstGrowth, growthMedian);
  rows.push([
    steps,
    formatNumber(median(perStep)),
    formatNumber(minimum(perStep)),
    typical.length > 0 ? formatNumber(median(typical)) : '—',
    growth.length > 0 ? `${formatNumber(growthMedian)}×` : '—',
    summed.length > 0 ? `${formatNumber(median(summed))}×` : '—',
  ]);
}
process.stdout.write(
  `Rein loop overhead, ScriptedProvider, ${reps} fresh processes per size, each warmed by an untimed run of the same size (Node ${process.version})\n\n` +
    `${markdownTable(['steps', 'µs/step median', 'µs/step best', 'median step µs', 'growth (median step, last/first tenth)', 'growth (summed)'], rows)}\n\n` +
    `growth ${worstGrowth <= 1.2 ? 'within' : 'ABOVE'} the 1.2× bound (median over processes ${formatNumber(worstGrowth)}×)\n`,
);
if (worstGrowth > 1.2) process.exitCode = 1;
