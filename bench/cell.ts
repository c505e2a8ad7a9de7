// One benchmark cell in a fresh process: `node --expose-gc --import tsx bench/cell.ts SUBJECT WORKLOAD PARAM`.
// Prints one line `CELL {json}` on stdout.
import { loadSubject } from './load-subject.ts';
import type { BenchSubject, ParallelMode } from './subject.ts';
import type { CellResult } from './workloads.ts';
import {
  measureLongSession,
  measureParallel,
  measureSteps,
  measureStream,
  probeResultOrder,
} from './workloads.ts';

/** The workloads a cell can run. */
export type WorkloadName = 'steps' | 'steps-warm' | 'stream' | 'parallel' | 'order' | 'session';

async function runCell(subject: BenchSubject, workload: WorkloadName, param: string): Promise<CellResult> {
  switch (workload) {
    case 'steps':
      return measureSteps(subject, Number(param));
    case 'steps-warm':
      // The warm-up is as long as the run: the young generation has grown before the clock starts.
      return measureSteps(subject, Number(param), Number(param));
    case 'stream':
      return measureStream(subject, Number(param));
    case 'parallel':
      return measureParallel(subject, param as ParallelMode);
    case 'order':
      return probeResultOrder(subject);
    case 'session':
      return measureLongSession(subject, Number(param));
  }
}

const [subjectName = '', workload = '', param = ''] = process.argv.slice(2);
const subject = await loadSubject(subjectName);
const result = await runCell(subject, workload as WorkloadName, param);
process.stdout.write(`CELL ${JSON.stringify(result)}\n`);
