import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskSessionStore } from '../../src/session/stores/index.ts';
import type { ChildBundle, ChildReport, ChildRun } from '../fixtures/session/session-child-runner.ts';
import {
  bundleSessionChild,
  runSessionChild,
  runSessionChildWithFileLimit,
} from '../fixtures/session/session-child-runner.ts';
import { appendTextTurn } from '../support/session-turns.ts';

let bundle: ChildBundle;
let directory: string;

beforeAll(async () => {
  bundle = await bundleSessionChild();
  directory = await mkdtemp(join(tmpdir(), 'rein-processes-'));
});

afterAll(async () => {
  await bundle?.dispose();
  await rm(directory, { recursive: true, force: true });
});

/** The first report of either kind. */
function firstOf(child: ChildRun, kinds: readonly string[]): Promise<ChildReport> {
  return Promise.race(
    kinds.map((kind) => child.waitFor(kind).catch(() => new Promise<ChildReport>(() => {}))),
  );
}

describe('two processes, one session', () => {
  it.each([
    ['an unlocked session', false],
    ['a session with a stale lock both must take over', true],
  ])(
    'exactly one of two processes opening %s for writing succeeds',
    async (_label, stale) => {
      const root = join(directory, stale ? 'race-stale' : 'race');
      const store = new DiskSessionStore({ root });
      const session = await store.create({ id: 'shared' });
      appendTextTurn(session, 'hello', 'hi');
      await store.release(session);
      if (stale) {
        const deadPid = Number(
          execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']),
        );
        await writeFile(
          join(root, 'shared.lock'),
          JSON.stringify({ pid: deadPid, host: hostname(), acquiredAt: 1, token: 'dead' }),
        );
      }

      const children = [
        runSessionChild(bundle, ['hold', root, 'shared']),
        runSessionChild(bundle, ['hold', root, 'shared']),
      ];
      const outcomes = await Promise.all(
        children.map((child) => firstOf(child, ['holding', 'refused', 'failed'])),
      );
      const winners = outcomes.filter((outcome) => outcome.kind === 'holding');
      const losers = outcomes.filter((outcome) => outcome.kind === 'refused');
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      const winner = winners[0]!;
      expect(losers[0]).toMatchObject({ code: 'SESSION_LOCKED' });
      expect(losers[0]!.message).toContain(`pid ${String(winner.pid)} on host ${hostname()}`);
      // Meanwhile this process may read, but not write.
      expect((await store.read('shared')).events.at(-1)).toMatchObject({ type: 'user/message' });
      await expect(store.open('shared')).rejects.toMatchObject({ code: 'SESSION_LOCKED' });

      for (const child of children) child.process.stdin!.end();
      await Promise.all(children.map((child) => child.exited));
      const released = children.find((child) => child.reports.some((report) => report.kind === 'released'));
      expect(released?.process.pid).toBe(winner.pid);
      expect(existsSync(join(root, 'shared.lock'))).toBe(false);
      // Only the winner's write is in the log, once.
      const notes = (await store.read('shared')).events.filter(
        (event) => event.type === 'user/message' && (event.data as { id: string }).id.startsWith('note-'),
      );
      expect(notes.map((event) => (event.data as { id: string }).id)).toEqual([`note-${String(winner.pid)}`]);
    },
    60_000,
  );

  it('a writer killed with SIGKILL leaves a stale lock that the next writer takes over', async () => {
    const root = join(directory, 'killed');
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'orphan' });
    await store.release(session);
    const child = runSessionChild(bundle, ['hold', root, 'orphan']);
    await child.waitFor('holding');
    const lock = JSON.parse(await readFile(join(root, 'orphan.lock'), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(child.process.pid);
    child.process.kill('SIGKILL');
    await child.exited;
    const reopened = await store.open('orphan');
    expect(reopened.events.map((event) => event.type)).toContain('user/message');
    await store.release(reopened);
  }, 60_000);
});

describe('a disk that refuses writes', () => {
  it('turns a failed write into CHECKPOINT_FAILED: the turn errors and no tool runs', async () => {
    // First learn the file size at each checkpoint of an unconstrained run.
    const probeRoot = join(directory, 'probe');
    const probe = runSessionChild(bundle, ['fsize', probeRoot, 'limited']);
    await probe.exited;
    const probeResult = await probe.waitFor('result');
    expect(probeResult).toMatchObject({ executed: true, turnEnd: { reason: { kind: 'completed' } } });
    // The file as created, and as the tool body finds it (the request and the streamed chunks in between,
    // written by the checkpoint before the body).
    const created = (await probe.waitFor('created')).bytes as number;
    const beforeTool = (await probe.waitFor('tool-body')).bytes as number;
    expect(beforeTool - created).toBeGreaterThan(2048);
    const blocks = Math.ceil((created + 1024) / 512);
    expect(blocks * 512).toBeLessThan(beforeTool);

    const root = join(directory, 'full');
    const child = runSessionChildWithFileLimit(bundle, blocks, ['fsize', root, 'limited']);
    await child.exited;
    const result = await child.waitFor('result');
    expect(result.executed).toBe(false);
    expect(result.turnEnd).toMatchObject({ reason: { kind: 'error', error: { code: 'CHECKPOINT_FAILED' } } });
    // The call still gets its one (error) result in the live log; its body never ran.
    expect((result.events as string[]).filter((type) => type === 'tool/result')).toHaveLength(1);
    // The file is cut at the limit (perhaps mid-line) and still loads to its complete prefix.
    const stored = await new DiskSessionStore({ root }).read('limited');
    expect(stored.events.length).toBeGreaterThan(0);
    expect(stored.events.map((event) => event.seq)).toEqual(stored.events.map((_, index) => index));
  }, 60_000);
  it('a background write that fails while read-only steps run ends the turn with CHECKPOINT_FAILED at the next step', async () => {
    const probeRoot = join(directory, 'probe-reads');
    const probe = runSessionChild(bundle, ['fsize-reads', probeRoot, 'reads']);
    await probe.exited;
    const created = (await probe.waitFor('created')).bytes as number;
    expect(await probe.waitFor('result')).toMatchObject({
      steps: 61,
      turnEnd: { reason: { kind: 'completed' } },
    });

    const root = join(directory, 'full-reads');
    const child = runSessionChildWithFileLimit(bundle, Math.ceil((created + 1024) / 512), [
      'fsize-reads',
      root,
      'reads',
    ]);
    await child.exited;
    const result = await child.waitFor('result');
    // The failed write surfaced as a typed error and stopped the turn well before its 61 steps.
    expect(result.turnEnd).toMatchObject({ reason: { kind: 'error', error: { code: 'CHECKPOINT_FAILED' } } });
    expect(result.steps as number).toBeLessThan(61);
    // Every logged call still has exactly one result, in order.
    expect(result.results).toEqual(result.calls);
    const stored = await new DiskSessionStore({ root }).read('reads');
    expect(stored.events.map((event) => event.seq)).toEqual(stored.events.map((_, index) => index));
  }, 60_000);
});
