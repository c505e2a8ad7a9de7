import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CrashTrialOutcome } from '../fixtures/session/crash-trial.ts';
import { runCrashTrial } from '../fixtures/session/crash-trial.ts';
import type { ChildBundle } from '../fixtures/session/session-child-runner.ts';
import { bundleSessionChild } from '../fixtures/session/session-child-runner.ts';
import { describePostgres, dropSchema, freshSchemaUrl } from '../support/postgres.ts';

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

describePostgres('crash-resume on PostgreSQL: a server SIGKILLed mid-turn, resumed by another', (url) => {
  let bundle: ChildBundle;
  let fresh: { url: string; schema: string };
  let fullRunMs = 0;
  const outcomes: CrashTrialOutcome[] = [];

  beforeAll(async () => {
    bundle = await bundleSessionChild();
    fresh = freshSchemaUrl(url);
    // A short lease, so that the resuming process takes a killed writer's session over quickly.
    fresh.url = `${fresh.url}&lease_ms=1500`;
  });

  afterAll(async () => {
    await bundle?.dispose();
    if (fresh !== undefined) await dropSchema(url, fresh.schema);
  });

  it('runs the whole scenario unkilled, and resumes the finished session', async () => {
    const outcome = await runCrashTrial({ bundle, root: fresh.url, id: 'full', rounds: 1 });
    expect(outcome).toMatchObject({ kind: 'resumed', killed: false, repairedTurn: false });
    expect(outcome.reportedDurable).toBe(outcome.loaded);
    fullRunMs = outcome.elapsedMs;
  }, 60_000);

  it(`survives ${killPoints} random SIGKILLs during tool turns (seed ${seed})`, async () => {
    const next = random(seed);
    const window = Math.max(300, fullRunMs * 1.05);
    const delays = Array.from({ length: killPoints }, () => Math.floor(next() * window));
    let index = 0;
    const worker = async (): Promise<void> => {
      while (index < delays.length) {
        const trial = index++;
        const outcome = await runCrashTrial({
          bundle,
          root: fresh.url,
          id: `crash-${trial}`,
          killAfterMs: delays[trial]!,
          rounds: 1,
        }).catch((error: unknown) => {
          throw new Error(`kill point ${trial} (${delays[trial]} ms, seed ${seed}) failed`, { cause: error });
        });
        outcomes.push(outcome);
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(outcomes).toHaveLength(killPoints);
    expect(outcomes.filter((outcome) => outcome.killed).length).toBeGreaterThan(killPoints / 2);
    expect(outcomes.some((outcome) => outcome.repairedTurn)).toBe(true);
  }, 240_000);
});
