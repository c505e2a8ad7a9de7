// `npx tsx bench/postgres-append-cost.ts [calls=300] [reps=15]`: the server's cost of one append call,
// schema version 4's function (lease-row renewal, NOTIFY every call) beside version 5's (the fence in the
// session-row update; NOTIFY off and on), over a bare `select 1` round trip, on one connection,
// rotating the order every rep. Each variant appends one ~250-byte line per call to its own session with
// `synchronous_commit = off` (a `process-crash` step). Wall µs per call, and the backend's CPU µs per call
// from /proc/<pid>/schedstat (the server must be local); "over floor" is the median of each rep's
// difference to that rep's `select 1`. Needs REIN_TEST_POSTGRES_URL (scripts/postgres-test-server.sh).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { postgresMigrations } from '../src/session/stores/postgres-schema.ts';

const url = process.env.REIN_TEST_POSTGRES_URL;
if (url === undefined || url === '') throw new Error('set REIN_TEST_POSTGRES_URL');
const calls = Number(process.argv[2] ?? 300);
const reps = Number(process.argv[3] ?? 15);
const line = `[3,${'"x",'.repeat(55)}1]\n`;
const client = new pg.Client({ connectionString: url });
await client.connect();
const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
const backendCpuUs = (): number =>
  Number(readFileSync(`/proc/${backend}/schedstat`, 'utf8').split(' ')[0]) / 1000;

/** A schema at `version` holding session `s` with its lease (token 1) held. */
async function schemaAt(schema: string, version: number): Promise<void> {
  await client.query(`drop schema if exists ${schema} cascade`);
  await client.query(`create schema ${schema}`);
  for (const migration of postgresMigrations.slice(0, version)) await client.query(migration(schema));
  await client.query(
    `insert into ${schema}.sessions (id, header, created_at, updated_at) values ('s', 'h', 0, 0)`,
  );
  await client.query(
    `insert into ${schema}.leases values ('s', 1, 'bench', 0, clock_timestamp() + interval '1 hour')`,
  );
  if (version >= 5) await client.query(`update ${schema}.sessions set lease_token = 1`);
}

await schemaAt('bench_append_v4', 4);
await schemaAt('bench_append_v5', 5);
let nextV4 = 0;
let nextV5 = 0;
const appendV5 = (notify: boolean): Promise<unknown> =>
  client.query({
    name: 'append-v5',
    text: `select bench_append_v5.append_events('s', 1, $1, 1, $2, 0, false, $3, 'bench')`,
    values: [nextV5++, line, notify],
  });
const variants: Array<[label: string, call: () => Promise<unknown>]> = [
  ['select 1', () => client.query({ name: 'floor', text: 'select 1' })],
  [
    'v4 append',
    () =>
      client.query({
        name: 'append-v4',
        text: `select bench_append_v4.append_events('s', 1, $1, 1, $2, 0, 30000, false, 'bench')`,
        values: [nextV4++, line],
      }),
  ],
  ['v5 append, no notify', () => appendV5(false)],
  ['v5 append, notify', () => appendV5(true)],
];
const results = new Map(variants.map(([label]) => [label, { wall: [] as number[], cpu: [] as number[] }]));
for (const [, call] of variants) for (let index = 0; index < 50; index++) await call();
for (let rep = 0; rep < reps; rep++) {
  for (let index = 0; index < variants.length; index++) {
    const [label, call] = variants[(rep + index) % variants.length]!;
    const cpuBefore = backendCpuUs();
    const start = performance.now();
    for (let count = 0; count < calls; count++) await call();
    results.get(label)!.wall.push(((performance.now() - start) * 1000) / calls);
    results.get(label)!.cpu.push((backendCpuUs() - cpuBefore) / calls);
  }
}
const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const floor = results.get('select 1')!;
console.log(
  `${calls} calls × ${reps} reps, one connection (median; over floor: median of per-rep differences)`,
);
for (const [label, { wall, cpu }] of results) {
  const wallOver = median(wall.map((value, rep) => value - floor.wall[rep]!));
  const cpuOver = median(cpu.map((value, rep) => value - floor.cpu[rep]!));
  console.log(
    `  ${label.padEnd(22)} wall ${median(wall).toFixed(0).padStart(5)} µs (over floor ${wallOver.toFixed(0).padStart(4)})` +
      `  backend CPU ${median(cpu).toFixed(1).padStart(6)} µs (over floor ${cpuOver.toFixed(1).padStart(6)})`,
  );
}
await client.query('drop schema bench_append_v4 cascade');
await client.query('drop schema bench_append_v5 cascade');
await client.end();
