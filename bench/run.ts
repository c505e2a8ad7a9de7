// `npm run bench`: Rein side by side with pi, the Vercel AI SDK and the OpenAI Agents SDK.
// Every cell runs in a fresh `node --expose-gc` process; repetitions are interleaved across subjects
// so machine noise hits every column alike. Options: --quick, --reps=N, --only=W1,W3, --subjects=a,b.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCell } from './run-cell.ts';
import type { Outcome } from './run-cell.ts';
import { formatNumber, markdownTable, maximum, median, minimum } from './stats.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = dirname(benchDir);
const peers = ['pi', 'ai-sdk', 'openai-agents'] as const;
const allSubjects = ['floor', 'rein', ...peers] as const;
const peerPackages = ['@mariozechner/pi-agent-core', '@mariozechner/pi-ai', 'ai', '@openai/agents'];

interface Options {
  quick: boolean;
  reps: number;
  only: Set<string>;
  subjects: readonly string[];
}

function parseOptions(argv: readonly string[]): Options {
  const value = (name: string): string | undefined =>
    argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  const quick = argv.includes('--quick');
  const reps = Number(value('reps') ?? (quick ? 2 : 5));
  if (!Number.isSafeInteger(reps) || reps < 1) throw new Error('--reps must be a positive integer');
  const only = new Set(
    (value('only') ?? 'W1,W2,W3,W4,W5').split(',').map((name) => name.trim().toUpperCase()),
  );
  const subjects = value('subjects')?.split(',') ?? [...allSubjects];
  for (const subject of subjects) {
    if (!(allSubjects as readonly string[]).includes(subject))
      throw new Error(`unknown subject '${subject}'`);
  }
  return { quick, reps, only, subjects };
}

/** Installs the pinned peers into bench/node_modules on first use (under the shared npm lock). */
function ensurePeers(): void {
  if (peerPackages.every((name) => existsSync(join(benchDir, 'node_modules', name, 'package.json')))) return;
  console.error('installing the peers into bench/node_modules …');
  const npm = ['npm', 'install', '--prefix', benchDir, '--no-audit', '--no-fund'];
  const hasFlock = spawnSync('flock', ['--version'], { stdio: 'ignore' }).status === 0;
  const [command, ...args] = hasFlock ? ['flock', '/tmp/rein-npm.lock', ...npm] : npm;
  const result = spawnSync(command!, args, { stdio: 'inherit', cwd: repoRoot });
  if (result.status !== 0) throw new Error('npm install --prefix bench failed');
}

// Cells that take minutes for the slowest peers (their per-step cost grows with the history).
const heavyCells = new Set(['steps:1000', 'session:2000']);
const slowPeers = new Set(['ai-sdk', 'openai-agents']);

/** Collected results: subject → workload/param key → one cell per repetition. */
type Results = Map<string, Map<string, Outcome[]>>;

async function collect(
  results: Results,
  subjects: readonly string[],
  workload: string,
  params: readonly string[],
  reps: number,
): Promise<void> {
  for (const param of params) {
    const heavy = heavyCells.has(`${workload}:${param}`);
    for (let rep = 0; rep < reps; rep++) {
      for (const subject of subjects) {
        // The slowest peers run the heaviest cells once: each such cell takes minutes on its own.
        if (heavy && rep > 0 && slowPeers.has(subject)) continue;
        // A mode the subject lacks answers `available: false` once; there is nothing to repeat.
        const earlier = results.get(subject)?.get(`${workload}:${param}`)?.[0];
        if (earlier?.ok === true && earlier.cell.available === false) continue;
        const outcome = await runCell(subject, workload, param, heavy ? 420_000 : 300_000);
        const key = `${workload}:${param}`;
        let bySubject = results.get(subject);
        if (bySubject === undefined) results.set(subject, (bySubject = new Map()));
        bySubject.set(key, [...(bySubject.get(key) ?? []), outcome]);
        const shown = outcome.ok ? JSON.stringify(outcome.cell) : `error: ${outcome.error}`;
        console.error(`  ${workload} ${param} ${subject} #${rep + 1}: ${shown}`);
      }
    }
  }
}

function values(results: Results, subject: string, key: string, field: string): number[] {
  const outcomes = results.get(subject)?.get(key) ?? [];
  return outcomes.flatMap((outcome) =>
    outcome.ok && typeof outcome.cell[field] === 'number' ? [outcome.cell[field]] : [],
  );
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim()
      .slice(0, 200) ?? 'no output'
  );
}

function errorOf(results: Results, subject: string, key: string): string | undefined {
  const outcomes = results.get(subject)?.get(key) ?? [];
  const failed = outcomes.find((outcome) => !outcome.ok);
  if (outcomes.length === 0) return undefined;
  if (outcomes.every((outcome) => outcome.ok && outcome.cell.available === false)) return 'n/a';
  return failed !== undefined && !failed.ok ? `failed: ${failed.error}` : undefined;
}

/** How a metric's best is chosen: lower (time, memory) or higher (throughput). */
type Better = 'lower' | 'higher';

/** One table row: a metric of one workload key, median (best) per subject, and Rein / best peer. */
function metricRow(
  results: Results,
  subjects: readonly string[],
  label: string,
  key: string,
  field: string,
  better: Better,
): string[] {
  const cells = subjects.map((subject) => {
    const error = errorOf(results, subject, key);
    const data = values(results, subject, key, field);
    if (data.length === 0) return error ?? '—';
    const best = better === 'lower' ? minimum(data) : maximum(data);
    return `${formatNumber(median(data))} (${formatNumber(best)})`;
  });
  const peerMedians = subjects
    .filter((subject) => (peers as readonly string[]).includes(subject))
    .map((subject) => median(values(results, subject, key, field)))
    .filter((value) => Number.isFinite(value));
  const rein = median(values(results, 'rein', key, field));
  let ratio = '—';
  if (peerMedians.length > 0 && Number.isFinite(rein)) {
    const bestPeer = better === 'lower' ? Math.min(...peerMedians) : Math.max(...peerMedians);
    ratio = `${formatNumber(rein / bestPeer)}×`;
  }
  return [label, ...cells, ratio];
}

function orderRow(results: Results, subjects: readonly string[]): string[] {
  const cells = subjects.map((subject) => {
    const outcomes = results.get(subject)?.get('order:probe') ?? [];
    if (outcomes.length === 0) return '—';
    const failed = outcomes.find((outcome) => !outcome.ok);
    if (failed !== undefined && !failed.ok) return `failed: ${failed.error}`;
    const all = outcomes.every((outcome) => outcome.ok && outcome.cell.modelOrder === true);
    const mode = outcomes[0]!.ok ? String(outcomes[0]!.cell.mode) : '';
    return all ? `yes (${mode})` : `**no** (${mode})`;
  });
  return ['results in model order, completion reversed', ...cells, '—'];
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options.subjects.some((subject) => (peers as readonly string[]).includes(subject))) ensurePeers();
  const { subjects, reps } = options;
  const results: Results = new Map();
  const sections: string[] = [];
  const header = (first: string): string[] => [first, ...subjects, 'Rein / best peer'];
  const started = new Date();

  if (options.only.has('W1')) {
    const steps = options.quick ? ['1', '10', '100'] : ['1', '10', '100', '1000'];
    await collect(results, subjects, 'steps', steps, reps);
    const rows = steps.map((n) =>
      metricRow(results, subjects, `µs/step, N = ${n}`, `steps:${n}`, 'usPerStep', 'lower'),
    );
    const last = steps[steps.length - 1]!;
    rows.push(
      metricRow(
        results,
        subjects,
        `growth, last/first tenth, N = ${last}`,
        `steps:${last}`,
        'growth',
        'lower',
      ),
    );
    sections.push(
      `### W1 steps (loop overhead per model request, fake-model time subtracted; lower is better)\n\n${markdownTable(header('metric'), rows)}`,
    );
  }
  if (options.only.has('W2')) {
    const counts = options.quick ? ['1000', '10000'] : ['1000', '10000', '100000'];
    await collect(results, subjects, 'stream', counts, reps);
    const rows = [
      ...counts.map((c) =>
        metricRow(
          results,
          subjects,
          `deltas/s, C = ${c} (higher is better)`,
          `stream:${c}`,
          'deltasPerSecond',
          'higher',
        ),
      ),
      ...counts.map((c) =>
        metricRow(
          results,
          subjects,
          `peak heap MiB above baseline, C = ${c}`,
          `stream:${c}`,
          'peakHeapMiB',
          'lower',
        ),
      ),
    ];
    sections.push(
      `### W2 stream (8-byte text deltas, paced: one macrotask every 64 deltas)\n\n${markdownTable(header('metric'), rows)}`,
    );
  }
  if (options.only.has('W3')) {
    const modes = ['unbounded', 'pool-10', 'pool-4', 'sequential'];
    await collect(results, subjects, 'parallel', modes, reps);
    await collect(results, subjects, 'order', ['probe'], 1);
    const rows = modes.map((mode) =>
      metricRow(results, subjects, `makespan / floor, ${mode}`, `parallel:${mode}`, 'overFloor', 'lower'),
    );
    rows.push(orderRow(results, subjects));
    sections.push(
      `### W3 parallel tools (16 concurrency-safe calls × 50 ms; floors 50 / 100 / 200 / 800 ms)\n\n${markdownTable(header('metric'), rows)}`,
    );
  }
  if (options.only.has('W4')) {
    const turns = options.quick ? '300' : '2000';
    await collect(results, subjects, 'session', [turns], reps);
    const key = `session:${turns}`;
    const rows = [
      metricRow(results, subjects, 'µs/turn, first 50 turns', key, 'firstTurnsUs', 'lower'),
      metricRow(results, subjects, 'µs/turn, last 50 turns', key, 'lastTurnsUs', 'lower'),
      metricRow(results, subjects, 'growth, last/first 50', key, 'growth', 'lower'),
      metricRow(results, subjects, `retained heap MiB after ${turns} turns`, key, 'retainedMiB', 'lower'),
    ];
    sections.push(
      `### W4 long session (${turns} turns of a short message and a short reply)\n\n${markdownTable(header('metric'), rows)}`,
    );
  }
  if (options.only.has('W5') && subjects.includes('rein')) {
    // W5 is the disk store's own benchmark (bench/persistence.ts): called as is, its report embedded.
    const args = options.quick ? ['--events=20000', '--steps=100', '--reps=2'] : [`--reps=${reps}`];
    console.error(`  W5: bench/persistence.ts ${args.join(' ')}`);
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(benchDir, 'persistence.ts'), ...args],
      {
        cwd: repoRoot,
        encoding: 'utf8',
      },
    );
    const body = child.status === 0 ? child.stdout.trim() : `failed: ${firstLine(child.stderr)}`;
    sections.push(
      `### W5 persistence (Rein only: \`npx tsx bench/persistence.ts ${args.join(' ')}\`)\n\n\`\`\`text\n${body}\n\`\`\``,
    );
  }

  const versions = subjects.map((subject) => subject).join(', ');
  const report = [
    `## Results — ${started.toISOString().slice(0, 16)} UTC, Node ${process.version}, ${reps} repetitions per cell`,
    '',
    `Cells show median (best) over the repetitions; subjects: ${versions}. Command: \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`.`,
    '',
    sections.join('\n\n'),
    '',
  ].join('\n');
  const outDir = join(benchDir, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.md'), report);
  process.stdout.write(report);
}

await main();
