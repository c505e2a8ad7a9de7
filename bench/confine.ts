// `npm run bench:confine`: what confinement costs, each against a baseline measured in the same run.
// 1. A sandboxed `bash` call's start-up over an unsandboxed one (`true`, median of many calls; target
//    ≤ 20 ms added).
// 2. `read_file` of a small file, and the open-and-read step alone, through the race-free verified walk
//    versus the check-then-open path it replaced (kept below as the baseline; target ≤ 20 % slower).
// Rounds alternate between the variants so drift on a shared machine hits both alike.
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
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

const rows: string[][] = [];
const verdicts: string[] = [];
const ctx = await context();

// 1. bash start-up.
const status = sandboxStatus();
if (!status.available) {
  rows.push(['sandboxed bash start-up', '—', '—', `sandbox unavailable: ${status.detail}`]);
} else {
  const plain = toolNamed(builtinTools({ workspace: workspaceRoot, reinHome }), 'bash');
  const boxed = toolNamed(builtinTools({ workspace: workspaceRoot, reinHome, sandbox: true }), 'bash');
  const timings: { plain: number[]; boxed: number[] } = { plain: [], boxed: [] };
  const once = async (tool: Tool): Promise<number> => {
    const started = process.hrtime.bigint();
    await tool.execute({ command: 'true' } as never, ctx);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  await once(plain);
  await once(boxed);
  for (let index = 0; index < bashCalls; index++) {
    timings.plain.push(await once(plain));
    timings.boxed.push(await once(boxed));
  }
  const added = median(timings.boxed) - median(timings.plain);
  rows.push([
    'bash `true`: median ms per call',
    formatNumber(median(timings.plain)),
    formatNumber(median(timings.boxed)),
    `+${formatNumber(added)} ms`,
  ]);
  verdicts.push(
    `sandbox start-up added ${formatNumber(added)} ms (target ≤ 20 ms): ${added <= 20 ? 'met' : 'MISSED'}`,
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
  const whole = perCallUs(() => void readTool.execute({ path: smallFile } as never, ctx), readCalls / rounds);
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
