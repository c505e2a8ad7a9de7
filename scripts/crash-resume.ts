// Crash-resume soak: runs the scripted session in a child process, SIGKILLs it at a random moment,
// resumes it here and checks the log (durable prefix intact, every call answered once, a valid next
// request, a completed new turn). Usage:
//   npx tsx scripts/crash-resume.ts [--runs 300] [--seed N] [--concurrency 3] [--rounds 1]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CrashTrialOutcome } from '../test/fixtures/session/crash-trial.ts';
import { runCrashTrial } from '../test/fixtures/session/crash-trial.ts';
import { bundleSessionChild } from '../test/fixtures/session/session-child-runner.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '300' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '1' },
  },
});
const runs = Number(values.runs);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000;
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
for (const [name, value] of Object.entries({ runs, seed, concurrency, rounds })) {
  if (!Number.isSafeInteger(value) || value < (name === 'seed' ? 0 : 1)) {
    console.error(`--${name} must be a positive integer`);
    process.exit(2);
  }
}

function generator(start: number): () => number {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const bundle = await bundleSessionChild();
const directory = await mkdtemp(join(tmpdir(), 'rein-crash-soak-'));
const started = performance.now();
let exitCode = 0;
try {
  const calibration = await runCrashTrial({
    bundle,
    root: join(directory, 'calibration'),
    id: 'full',
    rounds,
  });
  const window = Math.max(300, calibration.elapsedMs * 1.05);
  console.log(
    `seed ${seed}; unkilled run ${calibration.elapsedMs.toFixed(0)} ms, ${calibration.loaded} events; kill window ${window.toFixed(0)} ms`,
  );
  const next = generator(seed);
  const delays = Array.from({ length: runs }, () => Math.floor(next() * window));
  const outcomes: CrashTrialOutcome[] = [];
  const failures: string[] = [];
  let index = 0;
  const worker = async (): Promise<void> => {
    while (index < delays.length) {
      const trial = index++;
      try {
        outcomes.push(
          await runCrashTrial({
            bundle,
            root: join(directory, `trial-${trial}`),
            id: `crash-${trial}`,
            killAfterMs: delays[trial]!,
            rounds,
          }),
        );
      } catch (error) {
        const cause = error instanceof Error ? error.message : String(error);
        failures.push(`trial ${trial} (kill after ${delays[trial]} ms): ${cause}`);
      }
      await rm(join(directory, `trial-${trial}`), { recursive: true, force: true });
      if ((trial + 1) % 25 === 0) console.log(`… ${trial + 1}/${runs}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  const killed = outcomes.filter((outcome) => outcome.killed);
  const repaired = outcomes.filter((outcome) => outcome.repairedTurn);
  const early = outcomes.filter((outcome) => outcome.kind === 'before-create');
  const durable = outcomes.map((outcome) => outcome.reportedDurable);
  console.log(
    [
      `runs ${runs}: ${outcomes.length} verified, ${failures.length} failed`,
      `killed mid-run ${killed.length}, finished before the kill ${outcomes.length - killed.length}`,
      `open turns repaired ${repaired.length}, killed before the session existed ${early.length}`,
      `durable events reported before the kill: min ${Math.min(...durable)}, max ${Math.max(...durable)}`,
      `total ${((performance.now() - started) / 1000).toFixed(1)} s`,
    ].join('\n'),
  );
  for (const failure of failures) console.error(failure);
  if (failures.length > 0) exitCode = 1;
} finally {
  await bundle.dispose();
  await rm(directory, { recursive: true, force: true });
}
process.exit(exitCode);
