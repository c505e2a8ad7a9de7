// W5 cold resume: write a session of at least `events` events with the disk store, then time a fresh
// store + harness opening it (read, parse, validate and freeze every event, crash-repair check).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DiskSessionStore, ScriptedProvider, createHarness } from '../src/index.ts';
import { collectGarbage } from './workloads.ts';
import type { CellResult } from './workloads.ts';

const deltas = ['The ', 'quick ', 'brown ', 'fox.'];

/** Builds the session turn by turn (short prompt, four-delta reply), then measures the cold resume. */
export async function measureColdResume(events: number): Promise<CellResult> {
  const root = mkdtempSync(join(tmpdir(), 'rein-bench-resume-'));
  try {
    const writer = createHarness({
      store: new DiskSessionStore({ root }),
      providers: [
        new ScriptedProvider({ fallback: { text: deltas, usage: { inputTokens: 1, outputTokens: 1 } } }),
      ],
    });
    const agent = await writer.createAgent({ provider: 'scripted', model: 'fake', id: 'bench-resume' });
    while (agent.session.length < events) {
      agent.followup('hi');
      await agent.whenIdle();
    }
    const written = agent.session.length;
    await writer.dispose();
    collectGarbage();
    const reader = createHarness({ store: new DiskSessionStore({ root }) });
    const start = performance.now();
    const resumed = await reader.resumeAgent('bench-resume');
    const resumeMs = performance.now() - start;
    if (resumed.session.length < written)
      throw new Error(`resumed ${resumed.session.length} of ${written} events`);
    await reader.dispose();
    return { resumeMs, events: written };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
