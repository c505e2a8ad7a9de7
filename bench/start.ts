// `npm run bench:start`: how fast the `rein` process starts, beside `node -e 0` measured in the same run.
//
//   npm run bench:start                 # 10 runs of each command
//   npm run bench:start -- --runs=5
//   npm run bench:start -- --bin=/path/to/rein.js   # another build of the CLI (e.g. an older checkout)
//   npm run bench:start -- --before=/path/to/rein.js   # an older build as well, interleaved in the same run
//
// Every figure is a whole process (spawn to exit, or spawn to the first answered HTTP request for `rein
// web`); runs are interleaved across commands so a busy moment of the machine hurts every row alike.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const argumentsByName = new Map(
  process.argv.slice(2).map((argument) => {
    const [name, ...value] = argument.replace(/^--/, '').split('=');
    return [name!, value.join('=')] as const;
  }),
);
const runs = Number(argumentsByName.get('runs') ?? '10');
const bin = resolve(argumentsByName.get('bin') ?? join(import.meta.dirname, '..', 'bin', 'rein.js'));
const beforeBin = argumentsByName.has('before') ? resolve(argumentsByName.get('before')!) : undefined;
const timeBinary = '/usr/bin/time';

const root = mkdtempSync(join(tmpdir(), 'rein-bench-start-'));
const workspace = join(root, 'workspace');
mkdirSync(workspace, { recursive: true });
writeFileSync(join(workspace, 'README.md'), '# Bench project\n\nA project for the start-up benchmark.\n');
const env: NodeJS.ProcessEnv = { ...process.env, REIN_HOME: join(root, 'home'), REIN_DEMO_DELAY_MS: '0' };
for (const name of ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'REIN_MODEL'])
  delete env[name];

interface Sample {
  seconds: number;
  /** Peak resident set size in MiB (from `/usr/bin/time -v`), when measured. */
  rssMiB?: number;
  /** User plus system CPU seconds (from `/usr/bin/time -v`): steadier than wall time on a busy machine. */
  cpuSeconds?: number;
}

/** Runs one process to its exit, under `/usr/bin/time -v` so its peak RSS is known. */
function timedProcess(args: readonly string[]): Promise<Sample> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(timeBinary, ['-v', process.execPath, ...args], {
      cwd: workspace,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', fail);
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) {
        fail(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-800)}`));
        return;
      }
      const kib = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1];
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderr)?.[1];
      const system = /System time \(seconds\): ([\d.]+)/.exec(stderr)?.[1];
      done({
        seconds,
        ...(kib !== undefined ? { rssMiB: Number(kib) / 1024 } : {}),
        ...(user !== undefined && system !== undefined ? { cpuSeconds: Number(user) + Number(system) } : {}),
      });
    });
  });
}

/** Starts `rein web`, waits for its URL, answers one API request with the token, then stops it. */
function webToFirstAnswer(bin: string): Promise<Sample> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'web', '--port', '0'], {
      cwd: workspace,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let asked = false;
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', fail);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const printed = /Rein is running at (\S+)\n/.exec(stdout)?.[1];
      if (printed === undefined || asked) return;
      asked = true;
      const url = new URL(printed);
      const token = url.searchParams.get('token') ?? '';
      fetch(new URL('/api/sessions', url), { headers: { authorization: `Bearer ${token}` } })
        .then(async (response) => {
          await response.arrayBuffer();
          const seconds = (performance.now() - started) / 1000;
          child.once('close', () =>
            response.ok
              ? done({ seconds })
              : fail(new Error(`GET /api/sessions answered ${response.status}`)),
          );
          child.kill('SIGINT');
        })
        .catch((error: unknown) => {
          child.kill('SIGKILL');
          fail(error instanceof Error ? error : new Error(String(error)));
        });
    });
    child.on('close', (code) => {
      if (!asked) fail(new Error(`rein web exited ${code} before printing its URL: ${stderr.slice(-800)}`));
    });
  });
}

/** The timed commands of one build of the CLI; `label` tells a second build's rows apart. */
function reinCommands(bin: string, label: string): { name: string; sample: () => Promise<Sample> }[] {
  return [
    { name: `rein --version${label}`, sample: () => timedProcess([bin, '--version']) },
    { name: `rein --help${label}`, sample: () => timedProcess([bin, '--help']) },
    {
      name: `rein run (demo, no delay)${label}`,
      sample: () =>
        timedProcess([
          bin,
          'run',
          '--model',
          'demo/running-example',
          '--approve',
          'yolo',
          'what is this project?',
        ]),
    },
    { name: `rein web → first answer${label}`, sample: () => webToFirstAnswer(bin) },
  ];
}

const commands: { name: string; sample: () => Promise<Sample> }[] = [
  { name: 'node -e 0', sample: () => timedProcess(['-e', '0']) },
  ...reinCommands(bin, ''),
  ...(beforeBin !== undefined ? reinCommands(beforeBin, ' (before)') : []),
];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const samples = new Map<string, Sample[]>(commands.map((command) => [command.name, []]));
try {
  // One untimed round first: the file cache holds every file afterwards, as on a machine in use.
  for (const command of commands) await command.sample();
  for (let run = 0; run < runs; run += 1) {
    for (const command of commands) samples.get(command.name)!.push(await command.sample());
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const baseline = median(samples.get('node -e 0')!.map((sample) => sample.seconds));
console.log(
  `node ${process.version}, ${runs} runs each, bin ${bin}` +
    `${beforeBin !== undefined ? `, before ${beforeBin}` : ''}\n`,
);
console.log('| command | median s | × node -e 0 | best s | median CPU s | median peak RSS MiB |');
console.log('|---|---|---|---|---|---|');
for (const command of commands) {
  const list = samples.get(command.name)!;
  const seconds = list.map((sample) => sample.seconds);
  const rss = list.flatMap((sample) => (sample.rssMiB === undefined ? [] : [sample.rssMiB]));
  const cpu = list.flatMap((sample) => (sample.cpuSeconds === undefined ? [] : [sample.cpuSeconds]));
  console.log(
    `| ${command.name} | ${median(seconds).toFixed(3)} | ${(median(seconds) / baseline).toFixed(2)} | ` +
      `${Math.min(...seconds).toFixed(3)} | ${cpu.length === 0 ? '—' : median(cpu).toFixed(2)} | ` +
      `${rss.length === 0 ? '—' : median(rss).toFixed(1)} |`,
  );
}
console.log(
  '\nTargets: --version ≤ 1.5× node -e 0; run ≤ 0.25 s; web → first answer ≤ 0.5 s; run peak RSS ≤ 70 MiB.',
);
