// `npm run bench:postgres`: what the PostgreSQL session store costs, beside the disk store in the same run.
//  1. W1-shaped sustained appends: one no-op tool call per step (instant scripted model), declared
//     read-only and declared writing, memory store (baseline), disk and PostgreSQL under both durability
//     policies, and PostgreSQL in `process-crash` once more on one store kept for every turn (a
//     server's warm connections): µs per step, events per second, syncs per step, CPU (Rein's and the
//     server's, split by server process), and the PostgreSQL overhead as a multiple of the disk store's
//     (target ≤ 2× in `process-crash`), both as a ratio of medians and as the median of each rep's ratio.
//  2. W2 streaming with every chunk durable: one text delta appended, then flushed, at a time.
//  3. Cold resume of a 100k-event session in a fresh process (target ≤ 1 s), disk beside it.
//  4. 100 concurrent sessions on 2 server processes: p50/p99 checkpoint (append commit) latency.
//  5. Follow latency: a follower on another store of the same process, p50/p99 from a commit's return to
//     the follower's delivery of its last event, NOTIFY on every commit (interval 0) beside the default.
// The database: REIN_TEST_POSTGRES_URL, else a temporary server from scripts/postgres-test-server.sh.
// Options: --steps=300 --reps=3 --chunks=500 --events=100000 --sessions=100 --batches=20 --follows=300
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { SessionStore } from '../src/internal.ts';
import {
  DiskSessionStore,
  MemorySessionStore,
  PostgresSessionStore,
  createHarness,
} from '../src/internal.ts';
import type { StepRun, StepTool } from './persistence.ts';
import { buildLog, measureSteps } from './persistence.ts';

const script = fileURLToPath(import.meta.url);
const serverScript = resolve(import.meta.dirname, '../scripts/postgres-test-server.sh');

function option(name: string, fallback: number): number {
  const value = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  return value !== undefined ? Number(value) : fallback;
}

function text(name: string): string {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))!.slice(name.length + 3);
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const median = (values: readonly number[]): number => quantile(values, 0.5);

function schemaUrl(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
}

async function dropSchemas(url: string, schemas: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

/**
 * The server CPU of the latest metered span, µs, by the role of the process that spent it (`backend`
 * for every connection's process, else its title: walwriter, checkpointer, autovacuum worker, …).
 */
let lastServerSplit = new Map<string, number>();

/** A server process's role, from its title (`postgres: walwriter`, `postgres: rein rein 127.0.0.1(…) idle`). */
function processRole(pid: string, postmaster: string): string {
  if (pid === postmaster) return 'postmaster';
  const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  const name = title.startsWith('postgres: ') ? title.slice('postgres: '.length) : title;
  // A connection's title is `user database host(port) state`: its host part has a parenthesis.
  return /^\S+ \S+ \S*\(/.test(name) ? 'backend' : name;
}

/**
 * A meter of the local PostgreSQL server's CPU time (the postmaster and every process it started, from
 * /proc/<pid>/schedstat), when its data directory is known and readable: starting it returns the
 * reading, in µs since the start, of the processes alive at the reading (a process that exited in
 * between, such as an autovacuum worker, is left out rather than counted negative). Each reading also
 * leaves the split by process role in `lastServerSplit`.
 */
function serverCpuMeter(dataDirectory: string | undefined): (() => () => number) | undefined {
  if (dataDirectory === undefined || dataDirectory === '') return undefined;
  let postmaster: string;
  try {
    postmaster = readFileSync(join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]!.trim();
    readFileSync(`/proc/${postmaster}/schedstat`, 'utf8');
  } catch {
    // Another machine's server, or no /proc: the run reports this process's CPU only.
    return undefined;
  }
  const sample = (): Map<string, { role: string; nanoseconds: number }> => {
    const processes = new Map<string, { role: string; nanoseconds: number }>();
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // The parent pid is the second field after the command name, which may hold spaces.
        const parent = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
        if (pid !== postmaster && parent !== postmaster) continue;
        const nanoseconds = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
        processes.set(pid, { role: processRole(pid, postmaster), nanoseconds });
      } catch {
        // The process exited between the listing and the read.
      }
    }
    return processes;
  };
  return () => {
    const before = sample();
    return () => {
      let total = 0;
      const split = new Map<string, number>();
      for (const [pid, { role, nanoseconds }] of sample()) {
        const spent = (nanoseconds - (before.get(pid)?.nanoseconds ?? 0)) / 1000;
        total += spent;
        split.set(role, (split.get(role) ?? 0) + spent);
      }
      lastServerSplit = split;
      return total;
    };
  };
}

/** The floor of a waited-for commit: `count` bare `select 1` round trips; wall and CPU µs per trip. */
async function measureRoundTrips(
  client: pg.Client,
  count: number,
  meter: (() => () => number) | undefined,
): Promise<{ wallUs: number; cpuUs: number }> {
  const server = meter?.();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (let index = 0; index < count; index++) await client.query('select 1');
  const wallUs = ((performance.now() - start) * 1000) / count;
  const cpu = process.cpuUsage(cpuBefore);
  return { wallUs, cpuUs: (cpu.user + cpu.system + (server?.() ?? 0)) / count };
}

/** W2 with every chunk durable: append one delta, flush it, `count` times; returns chunks per second. */
async function measureDurableChunks(
  store: DiskSessionStore | PostgresSessionStore,
  id: string,
  count: number,
): Promise<number> {
  const session = await store.create({ id });
  session.append('turn/start', { turn: 1 });
  session.append('step/start', { turn: 1, step: 1 });
  await store.flush(session);
  const start = performance.now();
  for (let index = 0; index < count; index++) {
    session.append('assistant/chunk', {
      turn: 1,
      step: 1,
      chunk: { type: 'text-delta', index: 0, text: 'word ' },
    });
    await store.flush(session);
  }
  const elapsed = performance.now() - start;
  await store.release(session);
  return count / (elapsed / 1000);
}

/**
 * A writer committing `commits` unsynced batches (`process-crash`, a tool checkpoint each, 1 ms apart)
 * of three chunk events, followed from another store: ms from each commit's return to the delivery of
 * its last event (both clocks this process's).
 */
async function measureFollowLatency(
  url: string,
  id: string,
  notifyIntervalMs: number,
  commits: number,
): Promise<number[]> {
  const writer = await PostgresSessionStore.connect({ url, durability: 'process-crash', notifyIntervalMs });
  const reader = await PostgresSessionStore.connect({ url });
  const delivered = new Map<number, number>();
  const controller = new AbortController();
  const committed: Array<{ seq: number; at: number }> = [];
  try {
    const session = await writer.create({ id });
    session.append('turn/start', { turn: 1 });
    session.append('step/start', { turn: 1, step: 1 });
    await writer.flush(session);
    reader.follow(id, {
      from: 0,
      signal: controller.signal,
      onEvents: (events) => {
        const at = performance.now();
        for (const event of events) delivered.set(event.seq, at);
      },
    });
    // The follower has caught up with the start before the measured commits.
    while (!delivered.has(session.length - 1)) await new Promise((done) => setTimeout(done, 1));
    for (let index = 0; index < commits; index++) {
      for (let chunk = 0; chunk < 3; chunk++) {
        session.append('assistant/chunk', {
          turn: 1,
          step: 1,
          chunk: { type: 'text-delta', index: 0, text: 'word ' },
        });
      }
      await session.checkpoint('tool');
      committed.push({ seq: session.length - 1, at: performance.now() });
      await new Promise((done) => setTimeout(done, 1));
    }
    const deadline = performance.now() + 10_000;
    while (!delivered.has(session.length - 1) && performance.now() < deadline)
      await new Promise((done) => setTimeout(done, 1));
    await writer.release(session);
  } finally {
    controller.abort();
    await writer.close();
    await reader.close();
  }
  return committed.map(({ seq, at }) => (delivered.get(seq) ?? Number.POSITIVE_INFINITY) - at);
}

/** One store variant of the W1 comparison: its label, tool, and how each repetition gets its store. */
type StoreVariant = [label: string, kind: StepTool, make: (onDurable: () => void) => Promise<SessionStore>];

/** The per-rep ratio of two overheads (`value` over `base`, the base floored at 1 µs as the medians' ratio is). */
const pairRatio = (value: number, base: number): number => value / Math.max(1, base);

/** Child: W1 and W2 for every store variant, interleaved repetitions after a warm-up of each. */
async function compareStores(
  url: string,
  root: string,
  steps: number,
  reps: number,
  chunks: number,
  follows: number,
  serverDirectory: string | undefined,
): Promise<void> {
  const stores: PostgresSessionStore[] = [];
  const postgres = async (
    durability: 'process-crash' | 'power-loss',
    onDurable?: () => void,
  ): Promise<PostgresSessionStore> => {
    const store = await PostgresSessionStore.connect({
      url: schemaUrl(url, 'bench_steps'),
      durability,
      ...(onDurable !== undefined ? { onDurable } : {}),
    });
    stores.push(store);
    return store;
  };
  // A server connects its store once and runs every turn on it: its pooled connections (and the server
  // processes behind them) are warm after the first turn. A fresh store per turn, as in the other
  // PostgreSQL variants, is a process that runs one turn: each measured turn's first commit is its
  // connection's first call of the append function (plans, function compilation, catalog caches).
  const sharedStore = (): ((onDurable: () => void) => Promise<SessionStore>) => {
    let report: () => void = () => {};
    let store: PostgresSessionStore | undefined;
    return async (onDurable) => {
      report = onDurable;
      store ??= await postgres('process-crash', () => report());
      return store;
    };
  };
  const kinds: StepTool[] = ['read-only', 'writing'];
  const variants: StoreVariant[] = kinds.flatMap((kind): StoreVariant[] => [
    [`memory (baseline), ${kind}`, kind, async () => new MemorySessionStore()],
    [
      `disk, process-crash, ${kind}`,
      kind,
      async (onDurable) => new DiskSessionStore({ root, durability: 'process-crash', onDurable }),
    ],
    [`postgres, process-crash, ${kind}`, kind, (onDurable) => postgres('process-crash', onDurable)],
    [`postgres, process-crash, one store, ${kind}`, kind, sharedStore()],
    [`disk, power-loss, ${kind}`, kind, async (onDurable) => new DiskSessionStore({ root, onDurable })],
    [`postgres, power-loss, ${kind}`, kind, (onDurable) => postgres('power-loss', onDurable)],
  ]);
  const meter = serverCpuMeter(serverDirectory);
  const results = new Map<string, StepRun[]>(variants.map(([label]) => [label, []]));
  // Per variant and rep: the server CPU µs per step by process role.
  const splits = new Map<string, Array<Map<string, number>>>(variants.map(([label]) => [label, []]));
  const roundTrips: Array<{ wallUs: number; cpuUs: number }> = [];
  const floorClient = new pg.Client({ connectionString: url });
  await floorClient.connect();
  for (const [, kind, make] of variants) await measureSteps(make, steps, kind, meter);
  await measureRoundTrips(floorClient, steps, meter);
  for (let rep = 0; rep < reps; rep++) {
    for (let index = 0; index < variants.length; index++) {
      const [label, kind, make] = variants[(rep + index) % variants.length]!;
      lastServerSplit = new Map();
      results.get(label)!.push(await measureSteps(make, steps, kind, meter));
      splits.get(label)!.push(new Map([...lastServerSplit].map(([role, us]) => [role, us / (steps + 1)])));
    }
    roundTrips.push(await measureRoundTrips(floorClient, steps, meter));
  }
  await floorClient.end();
  const cpuOf = (row: StepRun): number => row.cpuUs + row.externalCpuUs;
  for (const kind of kinds) {
    const baseline = results.get(`memory (baseline), ${kind}`)!;
    const memory = median(baseline.map((row) => row.perStepUs));
    const memoryCpu = median(baseline.map(cpuOf));
    console.log(
      `W1-shaped sustained appends, ${kind} no-op tool: ${steps} steps × ${reps} reps (median; overhead over ` +
        'memory; commits or fdatasyncs that waited for storage, per step, over the whole turn):',
    );
    if (meter !== undefined) {
      console.log(
        '  (cpu: CPU time per step of the Rein process + of every PostgreSQL server process, from ' +
          "/proc/<pid>/schedstat; the disk store's kernel work is in the Rein process's system time)",
      );
    }
    const overhead = new Map<string, { wall: number; cpu: number }>();
    for (const [label, variantKind] of variants) {
      if (variantKind !== kind) continue;
      const rows = results.get(label)!;
      const perStep = median(rows.map((row) => row.perStepUs));
      const eventsPerS = median(rows.map((row) => row.eventsPerS));
      const syncs = median(rows.map((row) => row.syncs));
      const cpu = median(rows.map(cpuOf));
      const server = median(rows.map((row) => row.externalCpuUs));
      overhead.set(label, { wall: perStep - memory, cpu: cpu - memoryCpu });
      console.log(
        `  ${label.padEnd(44)} ${perStep.toFixed(0).padStart(6)} µs/step  ${eventsPerS.toFixed(0).padStart(7)} events/s  ` +
          `overhead ${(perStep - memory).toFixed(0).padStart(6)} µs` +
          (meter === undefined
            ? ''
            : `  cpu ${cpu.toFixed(0).padStart(5)} µs (server ${server.toFixed(0).padStart(4)}), overhead ${(cpu - memoryCpu).toFixed(0).padStart(5)} µs`) +
          (label.startsWith('memory') ? '' : `  ${(syncs / steps).toFixed(3)} syncs/step`),
      );
    }
    if (meter !== undefined) {
      console.log(
        '  server CPU µs/step by process (median over reps; roles that spent ≥ 0.05 µs/step in some variant):',
      );
      for (const [label, variantKind] of variants) {
        if (variantKind !== kind || !label.startsWith('postgres')) continue;
        const perRep = splits.get(label)!;
        const roles = [...new Set(perRep.flatMap((split) => [...split.keys()]))].sort();
        const parts = roles
          .map((role) => [role, median(perRep.map((split) => split.get(role) ?? 0))] as const)
          .filter(([, us]) => us >= 0.05)
          .map(([role, us]) => `${role} ${us.toFixed(1)}`);
        console.log(`    ${label.padEnd(44)} ${parts.join(', ') || 'none'}`);
      }
    }
    const pgLabels: Array<[policy: string, postgresLabel: string]> = [
      ['process-crash', `postgres, process-crash, ${kind}`],
      ['process-crash', `postgres, process-crash, one store, ${kind}`],
      ['power-loss', `postgres, power-loss, ${kind}`],
    ];
    for (const [policy, postgresLabel] of pgLabels) {
      const postgresOverhead = overhead.get(postgresLabel)!;
      const diskOverhead = overhead.get(`disk, ${policy}, ${kind}`)!;
      const ratio = pairRatio(postgresOverhead.wall, diskOverhead.wall);
      const cpuRatio = pairRatio(postgresOverhead.cpu, diskOverhead.cpu);
      // The same rep's overheads (every variant of a rep runs back to back, in rotating order): a busy
      // moment moves both, where the medians' ratio divides two medians of small, noisy differences.
      const pairs = baseline.map((memoryRow, rep) => {
        const postgresRow = results.get(postgresLabel)![rep]!;
        const diskRow = results.get(`disk, ${policy}, ${kind}`)![rep]!;
        return {
          wall: pairRatio(
            postgresRow.perStepUs - memoryRow.perStepUs,
            diskRow.perStepUs - memoryRow.perStepUs,
          ),
          cpu: pairRatio(cpuOf(postgresRow) - cpuOf(memoryRow), cpuOf(diskRow) - cpuOf(memoryRow)),
        };
      });
      // A rep where the disk store's overhead drowned in noise (≤ 1 µs) gives a large pair: counted, kept.
      const drowned = pairs.filter((_, rep) => {
        const diskRow = results.get(`disk, ${policy}, ${kind}`)![rep]!;
        return diskRow.perStepUs - baseline[rep]!.perStepUs <= 1;
      }).length;
      const pairedWall = median(pairs.map((pair) => pair.wall));
      const pairedCpu = median(pairs.map((pair) => pair.cpu));
      console.log(
        `  ${postgresLabel.replace(`, ${kind}`, '')} per-step overhead: ${ratio.toFixed(2)}× the disk store's wall time` +
          (meter === undefined ? '' : `, ${cpuRatio.toFixed(2)}× its CPU time`) +
          ` (medians); per-rep pairs, median of ${reps}: ${pairedWall.toFixed(2)}× wall` +
          (drowned > 0 ? ` (${drowned} with the disk overhead ≤ 1 µs)` : '') +
          (meter === undefined ? '' : `, ${pairedCpu.toFixed(2)}× CPU`) +
          (policy === 'process-crash'
            ? ` (target ≤ 2× on wall: ${ratio <= 2 ? 'met' : 'not met'} by the medians, ` +
              `${pairedWall <= 2 ? 'met' : 'not met'} by the pairs)`
            : ''),
      );
    }
    if (kind === 'writing') {
      // Before a writing body the fence must answer: one round trip per step is the least it can cost.
      const wall = median(roundTrips.map((trip) => trip.wallUs));
      const cpu = median(roundTrips.map((trip) => trip.cpuUs));
      const disk = overhead.get(`disk, process-crash, ${kind}`)!;
      console.log(
        `  Floor: one loopback round trip (\`select 1\` through pg, ${steps} × ${reps}): ${wall.toFixed(0)} µs wall` +
          (meter === undefined ? '' : `, ${cpu.toFixed(0)} µs CPU`) +
          ` = ${(wall / Math.max(1, disk.wall)).toFixed(1)}× the disk store's whole process-crash overhead` +
          (meter === undefined ? '' : ` (${(cpu / Math.max(1, disk.cpu)).toFixed(1)}× its CPU)`),
      );
    }
    console.log('');
  }
  const disk = new DiskSessionStore({ root });
  const pgStore = await postgres('power-loss');
  const diskRate = [];
  const pgRate = [];
  for (let rep = 0; rep < reps; rep++) {
    diskRate.push(await measureDurableChunks(disk, `chunks-${rep}`, chunks));
    pgRate.push(await measureDurableChunks(pgStore, `chunks-${rep}`, chunks));
  }
  console.log(
    `W2 streaming, every chunk durable (append + flush each of ${chunks} deltas, median of ${reps}):`,
  );
  console.log(`  disk      ${median(diskRate).toFixed(0).padStart(7)} chunks/s`);
  console.log(
    `  postgres  ${median(pgRate).toFixed(0).padStart(7)} chunks/s   ${(median(pgRate) / median(diskRate)).toFixed(2)}× disk`,
  );
  const intervals = [0, 50];
  const followed = new Map<number, number[]>(intervals.map((interval) => [interval, []]));
  for (let rep = 0; rep < reps; rep++) {
    for (let index = 0; index < intervals.length; index++) {
      const interval = intervals[(rep + index) % intervals.length]!;
      followed
        .get(interval)!
        .push(
          ...(await measureFollowLatency(
            schemaUrl(url, 'bench_steps'),
            `follow-${interval}-${rep}`,
            interval,
            follows,
          )),
        );
    }
  }
  console.log(
    `\nFollow latency, another store's follower (${follows} unsynced commits 1 ms apart × ${reps} reps, ` +
      'from the commit returning to the follower delivering its last event):',
  );
  for (const [interval, latencies] of followed) {
    console.log(
      `  notify interval ${`${interval} ms`.padEnd(6)} p50 ${quantile(latencies, 0.5).toFixed(2)} ms, ` +
        `p99 ${quantile(latencies, 0.99).toFixed(2)} ms, max ${Math.max(...latencies).toFixed(2)} ms`,
    );
  }
  for (const store of stores) await store.close();
}

/** How a cold process reads the big session: to write it, to resume it, or only to read it. */
type ColdRead = 'open' | 'resume' | 'read' | 'readLog';

/**
 * Child: one cold open (connect, read, validate, lease, release), resume, whole read, or read for
 * reading only (`readLog`, as the Web UI's server opens a session it does not run) of the big session.
 */
async function coldResume(location: string, what: ColdRead): Promise<void> {
  const start = performance.now();
  const store = location.startsWith('postgres')
    ? await PostgresSessionStore.connect({ url: location })
    : new DiskSessionStore({ root: location });
  let events: number;
  if (what === 'open') {
    const session = await store.open('big');
    events = session.length;
    await store.release(session);
  } else if (what === 'read') {
    events = (await store.read('big')).events.length;
  } else if (what === 'readLog') {
    // The last event built, as the history page's tail is.
    const { log } = await store.readLog!('big');
    events = log.at(-1) === undefined ? 0 : log.length;
  } else {
    const harness = createHarness({ store });
    const agent = await harness.resumeAgent('big', { provider: 'scripted', model: 'bench-model' });
    events = agent.session.length;
    await harness.dispose();
  }
  const wallMs = performance.now() - start;
  if (store instanceof PostgresSessionStore) await store.close();
  process.stdout.write(JSON.stringify({ wallMs, events }));
}

const coldLabels: Record<ColdRead, string> = {
  open: 'connect + open + release',
  resume: 'harness.resumeAgent',
  read: 'read (every event)',
  readLog: 'readLog (the Web UI)',
};

/** Child: one "server" running `sessions` sessions at once, each `batches` checkpoints of a step's events. */
async function serverLoad(url: string, prefix: string, sessions: number, batches: number): Promise<void> {
  const store = await PostgresSessionStore.connect({ url, poolSize: 10 });
  const latencies: number[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, index) => {
      const session = await store.create({ id: `${prefix}-${index}` });
      for (let batch = 0; batch < batches; batch++) {
        const turn = batch + 1;
        session.append('turn/start', { turn });
        session.append('step/start', { turn, step: 1 });
        for (let chunk = 0; chunk < 8; chunk++) {
          session.append('assistant/chunk', {
            turn,
            step: 1,
            chunk: { type: 'text-delta', index: 0, text: 'w ' },
          });
        }
        session.append('step/end', { turn, step: 1 });
        session.append('turn/end', { turn, reason: { kind: 'completed' } });
        const before = performance.now();
        await session.checkpoint('turn-end');
        latencies.push(performance.now() - before);
      }
      await store.release(session);
    }),
  );
  const elapsedMs = performance.now() - start;
  await store.close();
  process.stdout.write(JSON.stringify({ latencies, elapsedMs }));
}

function runChild(args: readonly string[]): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) =>
      code === 0 ? done(stdout) : fail(new Error(`child ${args[0]} failed: ${stderr}`)),
    );
  });
}

async function main(): Promise<void> {
  const steps = option('steps', 300);
  const reps = option('reps', 3);
  const chunks = option('chunks', 500);
  const eventCount = option('events', 100_000);
  const sessions = option('sessions', 100);
  const batches = option('batches', 20);
  const follows = option('follows', 300);
  const directory = mkdtempSync(join(tmpdir(), 'rein-bench-postgres-'));
  let url = process.env.REIN_TEST_POSTGRES_URL;
  const serverEnv = { ...process.env, REIN_TEST_POSTGRES_DIR: `${directory}-server` };
  // The server's data directory, to meter its CPU time: the test server's (ours, or the one that printed the URL).
  let serverDirectory = process.env.REIN_TEST_POSTGRES_DIR;
  if (url === undefined || url === '') {
    const started = execFileSync(serverScript, ['start'], { env: serverEnv, encoding: 'utf8' });
    url = /REIN_TEST_POSTGRES_URL=(\S+)/.exec(started)![1]!;
    serverDirectory = serverEnv.REIN_TEST_POSTGRES_DIR;
    console.log('Started a temporary PostgreSQL for this run.');
  }
  if (serverDirectory !== undefined) serverDirectory = join(serverDirectory, 'data');
  const schemas = ['bench_steps', 'bench_big', 'bench_load'];
  try {
    await dropSchemas(url, schemas);
    const server = new pg.Client({ connectionString: url });
    await server.connect();
    const version = (await server.query<{ v: string }>("select current_setting('server_version') as v"))
      .rows[0]!.v;
    await server.end();
    console.log(`PostgreSQL ${version} on loopback, Node ${process.version}\n`);

    process.stdout.write(
      await runChild([
        '--phase=stores',
        `--url=${url}`,
        `--root=${join(directory, 'steps')}`,
        `--steps=${steps}`,
        `--reps=${reps}`,
        `--chunks=${chunks}`,
        `--follows=${follows}`,
        ...(serverDirectory !== undefined ? [`--server-dir=${serverDirectory}`] : []),
      ]),
    );

    const log = buildLog(eventCount);
    const bigUrl = schemaUrl(url, 'bench_big');
    const diskRoot = join(directory, 'big');
    for (const store of [
      new DiskSessionStore({ root: diskRoot }),
      await PostgresSessionStore.connect({ url: bigUrl }),
    ]) {
      const session = await store.create({ id: 'big' }, { seed: log });
      await store.release(session);
      if (store instanceof PostgresSessionStore) await store.close();
    }
    console.log(
      `\nCold resume of a ${log.length}-event session, one fresh process each, median of ${reps} (target ≤ 1 s):`,
    );
    for (const [label, location] of [
      ['disk', diskRoot],
      ['postgres', bigUrl],
    ] as const) {
      for (const what of ['open', 'resume', 'read', 'readLog'] as const) {
        const walls: number[] = [];
        for (let rep = 0; rep < reps; rep++) {
          const child = spawnSync(
            process.execPath,
            ['--import', 'tsx', script, '--phase=cold', `--location=${location}`, `--what=${what}`],
            {
              encoding: 'utf8',
            },
          );
          if (child.status !== 0) throw new Error(`cold ${label} ${what} failed: ${child.stderr}`);
          walls.push((JSON.parse(child.stdout) as { wallMs: number }).wallMs);
        }
        const wall = median(walls);
        console.log(
          `  ${`${label} ${coldLabels[what]}`.padEnd(38)} ${wall.toFixed(0).padStart(6)} ms` +
            (label === 'postgres' && (what === 'open' || what === 'resume')
              ? `  (${wall <= 1000 ? 'within' : 'over'} 1 s)`
              : ''),
        );
      }
    }

    const loadUrl = schemaUrl(url, 'bench_load');
    const setup = await PostgresSessionStore.connect({ url: loadUrl });
    await setup.close();
    const half = Math.ceil(sessions / 2);
    const outputs = await Promise.all(
      ['a', 'b'].map((name) =>
        runChild([
          '--phase=load',
          `--url=${loadUrl}`,
          `--prefix=${name}`,
          `--sessions=${half}`,
          `--batches=${batches}`,
        ]),
      ),
    );
    const latencies = outputs.flatMap((output) => (JSON.parse(output) as { latencies: number[] }).latencies);
    const elapsed = Math.max(
      ...outputs.map((output) => (JSON.parse(output) as { elapsedMs: number }).elapsedMs),
    );
    const events = latencies.length * 12;
    console.log(
      `\n${half * 2} concurrent sessions on 2 server processes (pool of 10 each), ${batches} turns of 12 events each, ` +
        'every turn end committed with a WAL flush:',
    );
    console.log(
      `  append commit latency p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, ` +
        `max ${Math.max(...latencies).toFixed(1)} ms; ${(events / (elapsed / 1000)).toFixed(0)} events/s in all`,
    );
    await dropSchemas(url, schemas);
  } finally {
    if (process.env.REIN_TEST_POSTGRES_URL === undefined || process.env.REIN_TEST_POSTGRES_URL === '') {
      execFileSync(serverScript, ['stop'], { env: serverEnv });
    }
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && script === resolve(process.argv[1])) {
  if (process.argv.includes('--phase=stores')) {
    await compareStores(
      text('url'),
      text('root'),
      option('steps', 300),
      option('reps', 3),
      option('chunks', 500),
      option('follows', 300),
      process.argv.find((arg) => arg.startsWith('--server-dir='))?.slice('--server-dir='.length),
    );
  } else if (process.argv.includes('--phase=cold')) {
    await coldResume(text('location'), text('what') as ColdRead);
  } else if (process.argv.includes('--phase=load')) {
    await serverLoad(text('url'), text('prefix'), option('sessions', 50), option('batches', 20));
  } else {
    await main();
  }
}
