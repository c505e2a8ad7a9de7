// `npm run bench:cache`: how much of every request Rein sends a provider could serve from its prompt
// cache. A scripted 200-step coding session (parallel and exclusive tool calls, a steer, a retried
// request, a goal continuation, one compaction) runs through the real app harness against loopback
// servers speaking the DeepSeek (OpenAI-compatible) and Anthropic wire formats; every request body is
// recorded as sent and analysed afterwards.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summaryInstruction } from '../src/plugins/compaction/summarizer.ts';
import { compactSession, createReinHarness, setGoal } from '../src/index.ts';
import type { ReinHarness } from '../src/index.ts';
import type { FakeReply, FakeServer, RecordedRequest } from '../test/support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../test/support/fake-openai-server.ts';
import { startFakeAnthropicServer } from '../test/support/fake-anthropic-server.ts';
import { anthropicCacheReads, vendorPrefixShares } from './cache-analysis.ts';
import type { CacheRead, PrefixShare } from './cache-analysis.ts';

const totalSteps = 200;
const turnEnds = new Set([60, 110, 200]);
const goalPause = 140; // the model stops talking; the goal plugin continues the turn
const goalComplete = 160; // ends the goal's turn: the goal plugin asks for no further step
const steerAt = 20;
const retryAt = 90;
const compactAfter: number = goalComplete;

interface Vendor {
  name: 'deepseek' | 'anthropic';
  model: string;
  start(script: (request: number, body: unknown) => FakeReply): Promise<FakeServer>;
  env(url: string): Record<string, string>;
  overloaded: FakeReply;
}

const vendors: Vendor[] = [
  {
    name: 'deepseek',
    model: 'deepseek/deepseek-chat',
    start: (script) => startFakeOpenAIServer(script),
    env: (url) => ({ DEEPSEEK_API_KEY: 'sk-bench', DEEPSEEK_BASE_URL: url }),
    overloaded: { status: 503, headers: { 'retry-after': '0' }, error: { message: 'overloaded' } },
  },
  {
    name: 'anthropic',
    model: 'anthropic/claude-sonnet-4-5',
    start: (script) => startFakeAnthropicServer(script),
    env: (url) => ({ ANTHROPIC_API_KEY: 'sk-ant-bench', ANTHROPIC_BASE_URL: url }),
    overloaded: {
      status: 529,
      headers: { 'retry-after': '0' },
      error: { type: 'overloaded_error', message: 'Overloaded' },
    },
  },
];

/** The model's reply at a step of the plan: tool calls of several shapes, or text where a turn ends. */
function planned(step: number): FakeReply {
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  if (turnEnds.has(step) || step === goalPause) {
    return { text: [`Step ${step}: `, 'that part is done.'], usage };
  }
  const id = (index: number): string => `call_${step}_${index}`;
  const file = (index: number): string => `src/module-${String(index % 30).padStart(2, '0')}.ts`;
  if (step === goalComplete) {
    const evidence = JSON.stringify({ evidence: 'every module has a doc comment; grep finds none missing' });
    return { toolCalls: [{ id: id(0), name: 'goal_complete', arguments: evidence }], usage };
  }
  if (step % 10 === 5) {
    // Twelve parallel reads: more content blocks than Anthropic's 20-block cache lookback in one step.
    const calls = Array.from({ length: 12 }, (_, index) => ({
      id: id(index),
      name: 'read_file',
      arguments: JSON.stringify({ path: file(step + index) }),
    }));
    return { text: 'Reading a batch of modules.', toolCalls: calls, usage };
  }
  switch (step % 4) {
    case 0:
      return {
        text: `Looking at modules ${step % 30}–${(step + 2) % 30}.`,
        toolCalls: [0, 1, 2].map((index) => ({
          id: id(index),
          name: 'read_file',
          arguments: JSON.stringify({ path: file(step + index) }),
        })),
        usage,
      };
    case 1:
      return {
        toolCalls: [{ id: id(0), name: 'grep', arguments: JSON.stringify({ pattern: `value${step % 7}` }) }],
        usage,
      };
    case 2:
      return {
        text: 'Writing down what I found.',
        toolCalls: [
          {
            id: id(0),
            name: 'write_file',
            arguments: JSON.stringify({
              path: `notes/step-${step}.md`,
              content: `# Step ${step}\n\n${'finding '.repeat(40)}\n`,
            }),
          },
        ],
        usage,
      };
    default:
      return {
        toolCalls: [{ id: id(0), name: 'list_dir', arguments: JSON.stringify({ path: 'src' }) }],
        usage,
      };
  }
}

function isSummaryRequest(body: unknown): boolean {
  return JSON.stringify(body).includes(summaryInstruction.slice(0, 60));
}

async function runSession(vendor: Vendor): Promise<{ requests: RecordedRequest[]; summaries: number[] }> {
  const root = mkdtempSync(join(tmpdir(), `rein-cache-${vendor.name}-`));
  const workspace = join(root, 'workspace');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  for (let index = 0; index < 30; index++) {
    const lines = Array.from(
      { length: 60 },
      (_, line) =>
        `export const value${(index + line) % 7}_${line} = ${index * 100 + line}; // module ${index}`,
    );
    writeFileSync(
      join(workspace, 'src', `module-${String(index).padStart(2, '0')}.ts`),
      `${lines.join('\n')}\n`,
    );
  }
  let harness: ReinHarness | undefined;
  let step = 0;
  let retried = false;
  const summaries: number[] = [];
  const server = await vendor.start((number, body) => {
    if (isSummaryRequest(body)) {
      summaries.push(number);
      return { text: 'Summary: modules read, notes written, tests added, documentation complete.' };
    }
    if (step + 1 === retryAt && !retried) {
      retried = true;
      return vendor.overloaded;
    }
    step++;
    if (step === steerAt) harness?.agents.get(agentId)?.steer('Also keep the exported names stable.');
    return planned(step);
  });
  let agentId = '';
  try {
    harness = await createReinHarness({
      cwd: workspace,
      home: join(root, 'home'),
      env: vendor.env(server.url),
      model: vendor.model,
      approve: 'yolo',
    });
    const agent = await harness.createAgent({ cwd: workspace });
    agentId = agent.id;
    agent.followup('Refactor the modules under src/ and keep notes as you go.');
    await agent.whenIdle();
    agent.followup('Now add tests for what you changed.');
    await agent.whenIdle();
    setGoal(agent, 'Every module under src/ has a doc comment.');
    await agent.whenIdle();
    if (step !== compactAfter) throw new Error(`the plan drifted: ${step} steps before compaction`);
    const compaction = await compactSession(harness, agent);
    if (!compaction.compacted) throw new Error('the compaction did not happen');
    agent.followup('Finally, update the README.');
    await agent.whenIdle();
    if (step !== (totalSteps as number)) throw new Error(`the plan drifted: ${step} of ${totalSteps} steps`);
    return { requests: server.requests.slice(), summaries };
  } finally {
    await harness?.dispose();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

function percent(value: number): string {
  return `${(value * 100).toFixed(2)} %`;
}

function describeShares(shares: readonly PrefixShare[]): string[] {
  const judged = shares.filter((share) => !share.exempt);
  const below = judged.filter((share) => share.vendorShare < 1);
  const sorted = judged.map((share) => share.vendorShare).sort((a, b) => a - b);
  const lines = [
    `  request pairs judged: ${judged.length} (exempt: ${shares.length - judged.length}, each across a compaction)`,
    `  vendor-order prefix share: min ${percent(sorted[0] ?? 1)}, median ${percent(sorted[Math.floor(sorted.length / 2)] ?? 1)}; pairs below 100 %: ${below.length}`,
    `  raw JSON-body prefix share: median ${percent(median(judged.map((share) => share.rawShare)))}`,
  ];
  for (const share of below.slice(0, 5)) {
    lines.push(
      `    request ${share.index} → ${share.index + 1}: ${percent(share.vendorShare)}, differs at ${share.difference}`,
    );
  }
  return lines;
}

function describeReads(reads: readonly CacheRead[], summaries: readonly number[]): string[] {
  const fromThree = reads.filter((read) => read.index >= 2 && !read.summary);
  const afterCompaction = new Set(
    summaries.map((summary) => reads.find((read) => read.index > summary && !read.summary)?.index),
  );
  const share = (list: readonly CacheRead[]): string => {
    const input = list.reduce((sum, read) => sum + read.inputTokens, 0);
    const cached = list.reduce((sum, read) => sum + read.cachedTokens, 0);
    return `${percent(cached / input)} (${cached.toLocaleString('en-US')} of ${input.toLocaleString('en-US')} estimated tokens)`;
  };
  const misses = fromThree.filter((read) => read.cachedTokens / read.inputTokens < 0.5);
  const maxBreakpoints = Math.max(...reads.map((read) => read.breakpoints));
  return [
    `  cache breakpoints per request: at most ${maxBreakpoints} (the API allows 4)`,
    `  cached-read share of input tokens from the 3rd request on: ${share(fromThree)}`,
    `  the same without the first request after each compaction: ${share(fromThree.filter((read) => !afterCompaction.has(read.index)))}`,
    `  requests reading under half their input from cache: ${misses.length}` +
      (misses.length > 0
        ? ` (${misses.map((read) => `#${read.index + 1}${afterCompaction.has(read.index) ? ' after a compaction' : ''}`).join(', ')})`
        : ''),
  ];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const lines: string[] = [`# bench:cache — ${totalSteps} scripted steps per vendor`, ''];
for (const vendor of vendors) {
  const started = performance.now();
  const { requests, summaries } = await runSession(vendor);
  const bodies = requests.map((request) => ({
    raw: request.raw,
    body: request.body as Record<string, unknown>,
  }));
  lines.push(
    `## ${vendor.name} (${vendor.model}): ${requests.length} requests in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  lines.push(
    `  compactions: ${summaries.length} (summary calls at requests ${summaries.map((index) => index + 1).join(', ')}; one manual, the rest from context pressure)`,
  );
  lines.push(...describeShares(vendorPrefixShares(vendor.name, bodies, summaries, isSummaryRequest)));
  if (vendor.name === 'anthropic')
    lines.push(...describeReads(anthropicCacheReads(bodies, isSummaryRequest), summaries));
  lines.push('');
}
process.stdout.write(`${lines.join('\n')}\n`);
