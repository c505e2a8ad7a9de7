// `npm run bench:confine`: what confinement costs, each against a baseline measured in the same run.
// 1. A sandboxed `bash` call's start-up over an unsandboxed one (`true`, median of many calls; target
//    ≤ 20 ms added), beside the same two processes spawned bare (bash alone, and bwrap with exactly the
//    arguments Rein builds): the difference between the two gaps is what Rein itself adds. Then bare bwrap
//    with one group of arguments left out (or `--share-net` added) at a time: what each flag costs.
// 2. `read_file` of a small file, and the open-and-read step alone, through the race-free verified walk
//    versus the check-then-open path it replaced (kept below as the baseline; target ≤ 20 % slower).
// Rounds alternate between the variants so drift on a shared machine hits all of them alike.
//
//   npm run bench:confine                       # 40 bash calls per variant, 20,000 reads
//   npm run bench:confine -- --bash=100 --reads=50000
import { spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool, ToolContext } from '../src/internal.ts';
import {
  MemorySessionStore,
  Workspace,
  builtinTools,
  openVerified,
  readWhole,
  sandboxArguments,
  sandboxStatus,
} from '../src/internal.ts';
import { formatNumber, markdownTable, median } from './stats.ts';

const bashCalls = Number(process.argv.find((arg) => arg.startsWith('--bash='))?.slice(7) ?? 40);
const readCalls = Number(process.argv.find((arg) => arg.startsWith('--reads='))?.slice(8) ?? 20_000);

const base = mkdtempSync(join(tmpdir(), 'rein-bench-confine-'));
const workspaceRoot = join(base, 'ws');
mkdirSync(join(workspaceRoot, 'src/lib'), { recursive: true });
const smallFile = 'src/lib/small.txt';
writeFileSync(
  join(workspaceRoot, smallFile),
  Array.from({ length: 40 }, (_, index) => `line ${index}`).join('\n'),
);
const reinHome = join(base, 'rein-home');

async function context(): Promise<ToolContext> {
  const session = await new MemorySessionStore().create({ id: `bench-${Date.now()}` });
  return {
    signal: new AbortController().signal,
    callId: 'bench',
    sessionId: session.id,
    turn: 1,
    step: 1,
    session,
    deferContext: () => undefined,
    concludeTurn: () => undefined,
  };
}

function toolNamed(tools: Tool[], name: string): Tool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no ${name} tool`);
  return tool;
}

// The path the race-free walk replaced: resolve and check by path strings, recheck, open with O_NOFOLLOW.
function baselineRead(workspace: Workspace, requested: string): number {
  const checked = workspace.check(requested, 'read');
  const again = workspace.recheck(checked, 'read');
  const fd = openSync(again.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    const buffer = Buffer.alloc(stat.size);
    return readSync(fd, buffer, 0, buffer.length, 0);
  } finally {
    closeSync(fd);
  }
}

function verifiedRead(workspace: Workspace, requested: string): number {
  const opened = openVerified(workspace, requested);
  try {
    return readWhole(opened.fd, opened.stat.size).length;
  } finally {
    closeSync(opened.fd);
  }
}

function perCallUs(body: () => void, calls: number): number {
  const started = process.hrtime.bigint();
  for (let index = 0; index < calls; index++) body();
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

async function perCallUsAsync(body: () => Promise<unknown>, calls: number): Promise<number> {
  const started = process.hrtime.bigint();
  for (let index = 0; index < calls; index++) await body();
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

const rows: string[][] = [];
const verdicts: string[] = [];
const ctx = await context();

// 1. bash start-up: the tool with and without the sandbox, then the same processes spawned bare (what
//    bwrap itself costs with Rein's arguments), then bare bwrap with one group of arguments left out at a time.
const status = sandboxStatus();
if (!status.available || status.bwrap === undefined) {
  rows.push(['sandboxed bash start-up', '—', '—', `sandbox unavailable: ${status.detail}`]);
} else {
  const bwrap = status.bwrap;
  const plain = toolNamed(builtinTools({ workspace: workspaceRoot, reinHome }), 'bash');
  const boxed = toolNamed(builtinTools({ workspace: workspaceRoot, reinHome, sandbox: true }), 'bash');
  const script = ['/bin/bash', '-c', 'exec 2>&1\ntrue'];
  const full = sandboxArguments({
    workspace: realpathSync(workspaceRoot),
    cwd: realpathSync(workspaceRoot),
    reinHome,
    network: false,
    hide: [],
    command: script,
  });
  const at = full.indexOf('--');
  const options = full.slice(0, at);
  // Drops every occurrence of an option (and its operands) that `keep` refuses.
  const without = (drop: (option: string, operands: string[]) => boolean): string[] => {
    const arity: Record<string, number> = {
      '--ro-bind': 2,
      '--bind': 2,
      '--setenv': 2,
      '--dev': 1,
      '--proc': 1,
    };
    Object.assign(arity, { '--tmpfs': 1, '--chdir': 1, '--cap-drop': 1 });
    const kept: string[] = [];
    for (let index = 0; index < options.length;) {
      const option = options[index]!;
      const count = arity[option] ?? 0;
      const operands = options.slice(index + 1, index + 1 + count);
      if (!drop(option, operands)) kept.push(option, ...operands);
      index += 1 + count;
    }
    return kept;
  };
  const hidden = (option: string, operands: string[]): boolean =>
    (option === '--tmpfs' && operands[0] !== '/tmp') ||
    (option === '--ro-bind' && operands[0] === '/dev/null');
  const bare: Record<string, string[] | undefined> = {
    'bare bash (no bwrap)': undefined,
    "bare bwrap, Rein's arguments": options,
    'only --ro-bind / /': ['--ro-bind', '/', '/'],
    'without --dev /dev': without((option) => option === '--dev'),
    'without --proc /proc': without((option) => option === '--proc'),
    'without the private /tmp': without((option, operands) => option === '--tmpfs' && operands[0] === '/tmp'),
    [`without the ${options.filter((_, index) => hidden(options[index]!, options.slice(index + 1, index + 2))).length} hidden credential paths`]:
      without(hidden),
    // The workspace lives under /tmp here, which the private /tmp covers: no --chdir into it either.
    'without the workspace --bind (and --chdir)': without(
      (option) => option === '--bind' || option === '--chdir',
    ),
    'with --share-net (no network namespace)': [...options, '--share-net'],
    'user + pid namespaces only (not --unshare-all)': [
      ...without((option) => option === '--unshare-all'),
      '--unshare-user',
      '--unshare-pid',
    ],
    'without --die-with-parent': without((option) => option === '--die-with-parent'),
    'without --cap-drop ALL': without((option) => option === '--cap-drop'),
  };
  const spawned = (args: string[] | undefined): Promise<number> =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const child =
        args === undefined
          ? spawn(script[0]!, script.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
          : spawn(bwrap, [...args, '--', ...script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
      child.stdout.resume();
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0
          ? resolve(Number(process.hrtime.bigint() - started) / 1e6)
          : reject(new Error(`${args?.join(' ') ?? 'bash'} exited ${code}`)),
      );
    });
  const timings = new Map<string, number[]>();
  const record = (name: string, ms: number): void =>
    void timings.set(name, [...(timings.get(name) ?? []), ms]);
  const once = async (tool: Tool): Promise<number> => {
    const started = process.hrtime.bigint();
    await tool.execute({ command: 'true' } as never, ctx);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  await once(plain);
  await once(boxed);
  for (let index = 0; index < bashCalls; index++) {
    record('tool', await once(plain));
    record('tool, sandboxed', await once(boxed));
    for (const [name, args] of Object.entries(bare)) record(name, await spawned(args));
  }
  const at50 = (name: string): number => median(timings.get(name)!);
  const added = at50('tool, sandboxed') - at50('tool');
  const bareAdded = at50("bare bwrap, Rein's arguments") - at50('bare bash (no bwrap)');
  rows.push([
    'bash `true`: median ms per call',
    formatNumber(at50('tool')),
    formatNumber(at50('tool, sandboxed')),
    `+${formatNumber(added)} ms`,
  ]);
  rows.push([
    "bare spawn, same command and Rein's bwrap arguments",
    formatNumber(at50('bare bash (no bwrap)')),
    formatNumber(at50("bare bwrap, Rein's arguments")),
    `+${formatNumber(bareAdded)} ms (Rein's own share: ${formatNumber(added - bareAdded)} ms)`,
  ]);
  const reference = at50("bare bwrap, Rein's arguments");
  for (const name of Object.keys(bare).slice(2)) {
    rows.push([
      `bare bwrap, ${name}`,
      formatNumber(reference),
      formatNumber(at50(name)),
      `${at50(name) - reference <= 0 ? '' : '+'}${formatNumber(at50(name) - reference)} ms`,
    ]);
  }
  const argumentsUs = perCallUs(
    () =>
      sandboxArguments({
        workspace: workspaceRoot,
        cwd: workspaceRoot,
        reinHome,
        network: false,
        hide: [],
        command: script,
      }),
    2_000,
  );
  rows.push([
    'building the bwrap arguments (an lstat per credential path): µs per call',
    '—',
    formatNumber(argumentsUs),
    `${formatNumber(argumentsUs / 1000)} ms`,
  ]);
  verdicts.push(
    `sandbox start-up added ${formatNumber(added)} ms (target ≤ 20 ms): ${added <= 20 ? 'met' : 'MISSED'}; ` +
      `bare bwrap with the same arguments adds ${formatNumber(bareAdded)} ms`,
  );
}

// 2. read_file of a small file.
const workspace = new Workspace({ root: workspaceRoot, reinHome });
const readTool = toolNamed(builtinTools({ workspace: workspaceRoot, reinHome }), 'read_file');
const rounds = 10;
const open: { baseline: number[]; verified: number[] } = { baseline: [], verified: [] };
const tool: { baseline: number[]; verified: number[] } = { baseline: [], verified: [] };
for (let round = 0; round < rounds; round++) {
  open.baseline.push(perCallUs(() => baselineRead(workspace, smallFile), readCalls / rounds));
  open.verified.push(perCallUs(() => verifiedRead(workspace, smallFile), readCalls / rounds));
  // The whole tool as it is, and as it was: the same tool with the old open's cost in place of the new one's.
  // Awaited one at a time: the tool closes its descriptor after an await, so calls left running pile up.
  const whole = await perCallUsAsync(
    async () => readTool.execute({ path: smallFile } as never, ctx),
    readCalls / rounds,
  );
  const delta = open.baseline.at(-1)! - open.verified.at(-1)!;
  tool.verified.push(whole);
  tool.baseline.push(whole + delta);
}
const openRatio = median(open.verified) / median(open.baseline);
const toolRatio = median(tool.verified) / median(tool.baseline);
rows.push([
  'open + read of a small file: µs per call',
  formatNumber(median(open.baseline)),
  formatNumber(median(open.verified)),
  `${formatNumber(openRatio)}×`,
]);
rows.push([
  'read_file of a small file: µs per call',
  formatNumber(median(tool.baseline)),
  formatNumber(median(tool.verified)),
  `${formatNumber(toolRatio)}×`,
]);
verdicts.push(
  `read_file through the verified open is ${formatNumber((toolRatio - 1) * 100)} % slower than the old path ` +
    `(target ≤ 20 %): ${toolRatio <= 1.2 ? 'met' : 'MISSED'}`,
);

console.log(markdownTable(['measure', 'baseline', 'confined', 'difference'], rows));
for (const verdict of verdicts) console.log(verdict);
rmSync(base, { recursive: true, force: true });
