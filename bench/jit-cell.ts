// One W1 run for `bench/jit-cost.ts` in a fresh process:
// `node --expose-gc [V8 flags] --import tsx bench/jit-cell.ts SUBJECT N`. After the same untimed 20-step
// warm-up as `bench/cell.ts`, it prints `JIT-MEASURE-START` before the measured run (so that V8's own
// trace lines after it belong to the run) and then one line `JIT-CELL {json}`: wall time, the median step
// from the tool's timestamps, and the CPU time of the main thread and of every other thread (V8's
// compiler and collector helpers) over the run, read from /proc (Linux; absent elsewhere).
import { readFileSync, readdirSync } from 'node:fs';
import { loadSubject } from './load-subject.ts';
import type { BenchTool } from './subject.ts';
import { collectGarbage, medianStepUs, stepsScript } from './workloads.ts';

/** What one measured run gives. */
export interface JitCellResult {
  wallMs: number;
  medianStepUs: number;
  /** CPU ms of the main thread and of all others, or undefined without /proc. */
  mainThreadCpuMs?: number;
  otherThreadsCpuMs?: number;
}

// Clock ticks per second of /proc's utime and stime: 100 on every Linux this runs on (USER_HZ).
const ticksPerSecond = 100;

/** CPU ms per thread id, from /proc/self/task (empty where there is no /proc). */
function threadCpuMs(): Map<string, number> {
  const times = new Map<string, number>();
  let threads: string[];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    return times; // no /proc (not Linux): the thread split is left out
  }
  for (const thread of threads) {
    try {
      const stat = readFileSync(`/proc/self/task/${thread}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may contain spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      times.set(thread, ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond);
    } catch {
      // A thread that ended between the listing and the read: its time is gone with it.
    }
  }
  return times;
}

const [subjectName = '', steps = '1000'] = process.argv.slice(2);
const subject = await loadSubject(subjectName);
const count = Number(steps);
const noop = (marks: number[]): BenchTool => ({
  name: 'noop',
  execute: () => {
    marks.push(performance.now());
    return 'ok';
  },
});
await subject.runPrompt({ script: stepsScript(20), tool: noop([]) });
collectGarbage();
const marks: number[] = [];
process.stdout.write('JIT-MEASURE-START\n');
const before = threadCpuMs();
const start = performance.now();
await subject.runPrompt({ script: stepsScript(count), tool: noop(marks) });
const wallMs = performance.now() - start;
const after = threadCpuMs();
const result: JitCellResult = { wallMs, medianStepUs: medianStepUs(marks) };
if (after.size > 0) {
  const main = String(process.pid);
  let mainMs = 0;
  let otherMs = 0;
  for (const [thread, ms] of after) {
    const spent = ms - (before.get(thread) ?? 0);
    if (thread === main) mainMs += spent;
    else otherMs += spent;
  }
  result.mainThreadCpuMs = mainMs;
  result.otherThreadsCpuMs = otherMs;
}
process.stdout.write(`JIT-CELL ${JSON.stringify(result)}\n`);
