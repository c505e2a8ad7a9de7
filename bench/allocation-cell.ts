// One allocation cell in a fresh process (see bench/allocation.ts):
// `node --expose-gc --min-semi-space-size=M --max-semi-space-size=M --import tsx bench/allocation-cell.ts SUBJECT N [ROOT]`.
// Runs W1 (one no-op tool call a step, N steps, then an answer) once untimed, then again in a conversation
// kept open, and reads the heap around the measured turn: bytes allocated (heap growth with no collection
// in between: the young generation is sized so that none runs, and the cell reports any that did) and
// bytes retained (after a full collection, the conversation still open: the log and what it keeps).
// ROOT, when given, is another checkout whose bench/adapters/ (and so whose src/) the subject comes from.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { loadSubject } from './load-subject.ts';
import type { BenchTool } from './subject.ts';
import { collectGarbage, stepsScript } from './workloads.ts';

const [subjectName = '', param = '', root] = process.argv.slice(2);
const steps = Number(param);
const adapters = root === undefined ? undefined : pathToFileURL(`${root}/bench/adapters/`);
const subject = await loadSubject(subjectName, adapters);

let calls = 0;
const tool: BenchTool = {
  name: 'noop',
  execute: () => {
    calls++;
    return 'ok';
  },
};
// The warm-up is as long as the run, as in the `steps-warm` cell: the JIT has seen every step shape.
await subject.runPrompt({ script: stepsScript(steps), tool });
const conversation = await subject.openConversation(stepsScript(steps), tool);

// The observer reports late (the forced collections below can arrive after the run): count by start time.
const collectionStarts: number[] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collectionStarts.push(entry.startTime);
});
observer.observe({ entryTypes: ['gc'] });
collectGarbage();
calls = 0;
const start = performance.now();
const before = process.memoryUsage().heapUsed;
await conversation.turn('go');
const after = process.memoryUsage().heapUsed;
const end = performance.now();
collectGarbage();
const retained = process.memoryUsage().heapUsed;
await conversation.close();
await new Promise((resolve) => setTimeout(resolve, 10));
observer.disconnect();
const duringRun = collectionStarts.filter((time) => time >= start && time <= end).length;
if (calls !== steps) throw new Error(`expected ${steps} tool executions, saw ${calls}`);
const requests = steps + 1;
process.stdout.write(
  `CELL ${JSON.stringify({
    allocatedBytesPerStep: (after - before) / requests,
    retainedBytesPerStep: (retained - before) / requests,
    collectionsDuringRun: duringRun,
  })}\n`,
);
