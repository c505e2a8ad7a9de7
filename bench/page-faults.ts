// `node --expose-gc --import tsx bench/page-faults.ts [subject]`: one W1 run of 1,000 steps in this
// process, reporting per tenth of the run the median step cost and the minor page faults per step.
// On a virtual machine a first touch of a fresh heap page is expensive; tenths in which the young
// generation grows into new memory show a dozen faults per step and a several-times slower median step.
import type { BenchSubject, BenchTool } from './subject.ts';
import { stepsScript } from './workloads.ts';

const name = process.argv[2] ?? 'rein';
const { subject } = (await import(new URL(`./adapters/${name}.ts`, import.meta.url).href)) as {
  subject: BenchSubject;
};
const marks: number[] = [];
const faults: number[] = [];
const tool = (record: boolean): BenchTool => ({
  name: 'noop',
  execute: () => {
    if (record) {
      marks.push(performance.now());
      faults.push(process.resourceUsage().minorPageFault);
    }
    return 'ok';
  },
});
await subject.runPrompt({ script: stepsScript(20), tool: tool(false) });
(globalThis as { gc?: () => void }).gc?.();
await subject.runPrompt({ script: stepsScript(1000), tool: tool(true) });
const rows: string[] = [];
for (let tenth = 0; tenth < 10; tenth++) {
  const first = tenth * 100 + 1;
  const last = tenth * 100 + 99;
  const costs: number[] = [];
  for (let k = first; k <= last; k++) costs.push((marks[k]! - marks[k - 1]!) * 1000);
  costs.sort((a, b) => a - b);
  const perStep = (faults[last]! - faults[first - 1]!) / (last - first + 1);
  rows.push(
    `steps ${first}–${last + 1}: median ${costs[costs.length >> 1]!.toFixed(0)} µs, ${perStep.toFixed(1)} page faults/step`,
  );
}
process.stdout.write(`${name}, 1,000 steps:\n${rows.join('\n')}\n`);
