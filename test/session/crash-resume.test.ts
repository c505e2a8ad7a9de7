import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrashTrialOutcome } from '../fixtures/session/crash-trial.ts';
import { runCrashTrial } from '../fixtures/session/crash-trial.ts';
import type { ChildBundle } from '../fixtures/session/session-child-runner.ts';
import { bundleSessionChild } from '../fixtures/session/session-child-runner.ts';

// A seeded generator, so a failing kill point can be replayed (the seed is in the test name).
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const seed = Number(process.env.REIN_CRASH_SEED ?? Date.now() % 100_000);
const killPoints = 30;
// One round of the scenario (text, tool, parallel and approval turns) keeps each trial short.
const rounds = 1;

describe('crash-resume: a child SIGKILLed at random moments, resumed by the parent', () => {
  let bundle: ChildBundle;
  let directory: string;
  let fullRunMs = 0;
  const outcomes: CrashTrialOutcome[] = [];

  beforeAll(async () => {
    bundle = await bundleSessionChild();
    directory = await mkdtemp(join(tmpdir(), 'rein-crash-'));
  });

  afterAll(async () => {
    await bundle?.dispose();
    await rm(directory, { recursive: true, force: true });
  });

  it('runs the whole scenario unkilled, and resumes the finished session', async () => {
    const outcome = await runCrashTrial({ bundle, root: join(directory, 'calibration'), id: 'full', rounds });
    expect(outcome).toMatchObject({ kind: 'resumed', killed: false, repairedTurn: false });
    expect(outcome.reportedDurable).toBe(outcome.loaded);
    fullRunMs = outcome.elapsedMs;
  }, 60_000);

  it(`survives ${killPoints} random kill points (seed ${seed})`, async () => {
    const next = random(seed);
    // Kill anywhere from the session's creation to a little past the scenario's natural end.
    const window = Math.max(300, fullRunMs * 1.05);
    const delays = Array.from({ length: killPoints }, () => Math.floor(next() * window));
    let index = 0;
    // Three trials at a time: each child is mostly waiting on its scripted delays and fsyncs.
    const worker = async (): Promise<void> => {
      while (index < delays.length) {
        const trial = index++;
        const outcome = await runCrashTrial({
          bundle,
          root: join(directory, `trial-${trial}`),
          id: `crash-${trial}`,
          killAfterMs: delays[trial]!,
          rounds,
        }).catch((error: unknown) => {
          throw new Error(`kill point ${trial} (${delays[trial]} ms, seed ${seed}) failed`, { cause: error });
        });
        outcomes.push(outcome);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(outcomes).toHaveLength(killPoints);
    // The kills landed across the run: some mid-turn (repaired), and most after real progress.
    expect(outcomes.filter((outcome) => outcome.killed).length).toBeGreaterThan(killPoints / 2);
    expect(outcomes.some((outcome) => outcome.repairedTurn)).toBe(true);
  }, 240_000);
});
