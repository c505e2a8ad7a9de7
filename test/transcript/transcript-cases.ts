import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnySessionEvent, ApprovalDecision, Harness, TranscriptItem } from '../../src/index.ts';
import {
  builtinTools,
  compactSession,
  compactionPlugin,
  createHarness,
  permissionsPlugin,
  retryPlugin,
} from '../../src/index.ts';
import type { ScriptedTurn } from '../../src/testing/index.ts';
import { ScriptedProvider, deferred } from '../../src/testing/index.ts';
import { readFileTool } from '../server/support.ts';

/**
 * The one table of logs → transcripts every consumer is checked against: the SDK fold (`Transcript`),
 * `rein show` and the Web UI. `match` is what the fold yields for an item (a partial object);
 * `shows` are the phrases every human-facing rendering of that item must show (case and spacing
 * aside), in order. Logs come from real agents over a scripted model, except module records and an
 * unknown module's event, whose data shapes are written out as their modules record them.
 */
export interface TranscriptCase {
  readonly name: string;
  /** Produces the log (a fresh run each time). */
  log(): Promise<readonly AnySessionEvent[]>;
  readonly items: readonly ExpectedItem[];
}

/** One expected item of a transcript. */
export interface ExpectedItem {
  /** A deep partial of the item (`toMatchObject`). */
  readonly match: { kind: TranscriptItem['kind'] } & Record<string, unknown>;
  readonly shows: readonly string[];
}

async function runAgent(
  harness: Harness,
  prompts: readonly string[],
  during?: (agent: Awaited<ReturnType<Harness['createAgent']>>) => Promise<void>,
): Promise<AnySessionEvent[]> {
  try {
    const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
    for (const prompt of prompts) {
      agent.followup(prompt);
      if (during !== undefined) await during(agent);
      await agent.whenIdle();
    }
    return agent.session.events.slice();
  } finally {
    await harness.dispose();
  }
}

function scripted(responses: ScriptedTurn[]): ScriptedProvider {
  return new ScriptedProvider({
    responses,
    models: { 'test-model': { contextWindow: 4_000, pricing: { input: 1, output: 2 } } },
  });
}

async function withWorkspace<T>(body: (workspace: string, reinHome: string) => Promise<T>): Promise<T> {
  const root = await mkdtemp(join(tmpdir(), 'rein-transcript-'));
  try {
    return await body(root, join(root, '.rein-home'));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function record(seq: number, type: string, data: unknown): AnySessionEvent {
  const surface = type === 'assistant/message' || type === 'tool/result' || type === 'user/message';
  return {
    seq,
    type,
    time: 1_700_000_000_000 + seq,
    data,
    ...(surface ? { surfaceOp: 'append' as const } : {}),
  };
}

const filler = (label: string): string => `${label} ${'lorem ipsum dolor sit amet '.repeat(30)}`;

/** Every case of the table. */
export const transcriptCases: readonly TranscriptCase[] = [
  {
    name: 'the running example: a read, its result, reasoning, usage and a todo list',
    log: () =>
      withWorkspace((workspace, reinHome) =>
        runAgent(
          createHarness({
            providers: [
              scripted([
                {
                  text: 'Reading.',
                  toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.md' } }],
                  usage: { inputTokens: 10, outputTokens: 2 },
                },
                {
                  toolCalls: [
                    {
                      id: 'c2',
                      name: 'todo_write',
                      arguments: { todos: [{ content: 'Summarize a.md', status: 'in_progress' }] },
                    },
                  ],
                  usage: { inputTokens: 15, outputTokens: 4 },
                },
                { reasoning: 'It is short.', text: 'Summary.', usage: { inputTokens: 20, outputTokens: 3 } },
              ]),
            ],
            tools: [
              readFileTool(),
              ...builtinTools({ workspace, reinHome }).filter((tool) => tool.name === 'todo_write'),
            ],
          }),
          ['Summarize a.md'],
        ),
      ),
    items: [
      { match: { kind: 'turn-start', turn: 1 }, shows: ['turn 1'] },
      { match: { kind: 'user', source: 'user', text: 'Summarize a.md' }, shows: ['Summarize a.md'] },
      {
        match: {
          kind: 'assistant',
          streaming: false,
          interrupted: false,
          usage: { inputTokens: 10, outputTokens: 2 },
        },
        shows: ['Reading.'],
      },
      {
        match: {
          kind: 'tool',
          callId: 'c1',
          name: 'read_file',
          state: 'done',
          result: { text: 'contents of a.md', isError: false },
        },
        shows: ['read_file'],
      },
      { match: { kind: 'assistant', streaming: false }, shows: [] },
      { match: { kind: 'tool', name: 'todo_write', state: 'done' }, shows: ['todo_write'] },
      {
        match: {
          kind: 'assistant',
          blocks: [
            { type: 'reasoning', text: 'It is short.' },
            { type: 'text', text: 'Summary.' },
          ],
        },
        shows: ['Summary.'],
      },
      { match: { kind: 'turn-end', turn: 1, reason: { kind: 'completed' } }, shows: ['completed'] },
    ],
  },
  {
    name: 'an approval denied with a reason: the card shows the decision and the failed call',
    log: () =>
      withWorkspace((workspace, reinHome) => {
        const harness = createHarness({
          providers: [
            scripted([
              {
                toolCalls: [
                  { id: 'w1', name: 'write_file', arguments: { path: 'notes.txt', content: 'hello\n' } },
                ],
              },
              { text: 'Understood.' },
            ]),
          ],
          tools: builtinTools({ workspace, reinHome }),
          plugins: [permissionsPlugin({ mode: 'ask', workspace, reinHome })],
        });
        harness.approvals.attach({
          notify: (): Promise<ApprovalDecision> =>
            Promise.resolve({ decision: 'deny', reason: 'write to drafts/ instead' }),
        });
        return runAgent(harness, ['write the notes']);
      }),
    items: [
      { match: { kind: 'turn-start', turn: 1 }, shows: ['turn 1'] },
      { match: { kind: 'user', text: 'write the notes' }, shows: ['write the notes'] },
      { match: { kind: 'assistant' }, shows: [] },
      {
        match: {
          kind: 'tool',
          name: 'write_file',
          state: 'failed',
          approval: { decision: 'deny', decisionReason: 'write to drafts/ instead' },
          result: { isError: true },
        },
        shows: ['write_file', 'write to drafts/ instead'],
      },
      { match: { kind: 'assistant' }, shows: ['Understood.'] },
      { match: { kind: 'turn-end', reason: { kind: 'completed' } }, shows: ['completed'] },
    ],
  },
  {
    name: 'Stop during a stream, then a failed request: interrupted answer, cancellation, error with its code',
    log: async () => {
      const streaming = deferred<void>();
      const harness = createHarness({
        providers: [
          scripted([
            () => {
              streaming.resolve();
              return { text: ['partial ', 'answer'], hang: true };
            },
            { error: { code: 'AUTH', message: 'bad key' } },
          ]),
        ],
      });
      let first = true;
      return runAgent(harness, ['go', 'again'], async (agent) => {
        if (!first) return;
        first = false;
        await streaming.promise;
        await new Promise((resolve) => setTimeout(resolve, 50));
        agent.cancel({ kind: 'user' });
      });
    },
    items: [
      { match: { kind: 'turn-start', turn: 1 }, shows: ['turn 1'] },
      { match: { kind: 'user', text: 'go' }, shows: ['go'] },
      {
        match: {
          kind: 'assistant',
          streaming: false,
          interrupted: true,
          blocks: [{ type: 'text', text: 'partial answer' }],
        },
        shows: ['partial answer', 'interrupted'],
      },
      {
        match: { kind: 'cancelled', cause: { kind: 'user' }, text: 'Stopped by you' },
        shows: ['Stopped by you'],
      },
      { match: { kind: 'turn-end', turn: 1, reason: { kind: 'aborted' } }, shows: ['aborted'] },
      { match: { kind: 'turn-start', turn: 2 }, shows: ['turn 2'] },
      { match: { kind: 'user', text: 'again' }, shows: ['again'] },
      { match: { kind: 'assistant', failed: true, streaming: false }, shows: [] },
      // A failure is shown once: by the item that ends its chain (here the turn's end).
      { match: { kind: 'request-failed', turn: 2, failure: { code: 'AUTH' } }, shows: [] },
      {
        match: { kind: 'turn-end', turn: 2, reason: { kind: 'error', error: { code: 'AUTH' } } },
        shows: ['AUTH', 'bad key'],
      },
    ],
  },
  {
    name: 'a rate limit retried once, then an answer',
    log: () =>
      runAgent(
        createHarness({
          providers: [
            scripted([{ error: { code: 'RATE_LIMIT', message: 'slow down' } }, { text: 'Made it.' }]),
          ],
          plugins: [retryPlugin({ initialDelayMs: 1, maxDelayMs: 1, jitterRatio: 0 })],
        }),
        ['hi'],
      ),
    items: [
      { match: { kind: 'turn-start', turn: 1 }, shows: ['turn 1'] },
      { match: { kind: 'user', text: 'hi' }, shows: ['hi'] },
      { match: { kind: 'assistant', failed: true }, shows: [] },
      // A failure is shown once: by the retry that answers it.
      { match: { kind: 'request-failed', failure: { code: 'RATE_LIMIT' } }, shows: [] },
      {
        match: { kind: 'retry', attempt: 1, delayMs: 1, failure: { code: 'RATE_LIMIT' } },
        shows: ['retry', 'RATE_LIMIT', 'slow down'],
      },
      { match: { kind: 'assistant', failed: false }, shows: ['Made it.'] },
      { match: { kind: 'turn-end', reason: { kind: 'completed' } }, shows: ['completed'] },
    ],
  },
  {
    name: 'a manual compaction: older history summarized, with tokens before and after',
    log: async () => {
      const harness = createHarness({
        providers: [
          scripted([
            { text: filler('answer one') },
            { text: filler('answer two') },
            { text: 'Summary of question one.' },
          ]),
        ],
        plugins: [compactionPlugin({})],
      });
      try {
        const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
        for (const prompt of [filler('question one'), filler('question two')]) {
          agent.followup(prompt);
          await agent.whenIdle();
        }
        await compactSession(harness, agent);
        return agent.session.events.slice();
      } finally {
        await harness.dispose();
      }
    },
    items: [
      { match: { kind: 'turn-start', turn: 1 }, shows: ['turn 1'] },
      { match: { kind: 'user', source: 'user' }, shows: ['question one'] },
      { match: { kind: 'assistant' }, shows: ['answer one'] },
      { match: { kind: 'turn-end', turn: 1 }, shows: ['completed'] },
      { match: { kind: 'turn-start', turn: 2 }, shows: ['turn 2'] },
      { match: { kind: 'user' }, shows: ['question two'] },
      { match: { kind: 'assistant' }, shows: ['answer two'] },
      { match: { kind: 'turn-end', turn: 2 }, shows: ['completed'] },
      {
        match: {
          kind: 'compaction',
          trigger: 'manual',
          state: 'done',
          summary: { shadowedTokens: 214, summaryTokens: 50 },
        },
        shows: ['summarized', '214', '50'],
      },
    ],
  },
  {
    name: 'module records (goals, repetition guard, budgets), a subagent result and an ignorable record of an unknown module',
    log: () =>
      Promise.resolve([
        ...(
          [
            ['goal/set', { goalId: 'g1', objective: 'Ship it', maxRounds: 3 }],
            ['turn/start', { turn: 1 }],
            ['step/start', { turn: 1, step: 1 }],
            [
              'assistant/message',
              {
                turn: 1,
                step: 1,
                message: {
                  id: 'm1',
                  role: 'assistant',
                  content: [{ type: 'tool-call', id: 't1', name: 'task', arguments: '{"prompt":"count"}' }],
                  source: { kind: 'model', provider: 'scripted', model: 'test-model' },
                },
              },
            ],
            ['tool/call', { turn: 1, step: 1, callId: 't1', name: 'task', arguments: '{"prompt":"count"}' }],
            [
              'tool/result',
              {
                turn: 1,
                step: 1,
                message: {
                  id: 'm2',
                  role: 'user',
                  content: [
                    { type: 'tool-result', toolCallId: 't1', content: [{ type: 'text', text: 'three' }] },
                  ],
                  source: { kind: 'tool', callId: 't1' },
                },
                meta: { childSessionId: 'child-1', usage: { inputTokens: 1, outputTokens: 1 } },
              },
            ],
            ['step/end', { turn: 1, step: 1 }],
            [
              'guard/stopped',
              {
                turn: 1,
                fingerprint: 'task#abc',
                count: 5,
                name: 'task',
                message: 'Stopped a loop of identical calls.',
              },
            ],
            ['turn/end', { turn: 1, reason: { kind: 'blocked' } }],
            ['goal/continued', { goalId: 'g1', round: 1 }],
            ['goal/stopped', { goalId: 'g1', reason: 'no-progress', rounds: 1 }],
            ['budget/reached', { turn: 1, step: 1, limit: 'turn.costUsd', used: 0.25, max: 0.2 }],
            ['budget/raised', { perTurn: { costUsd: 0.5, steps: null } }],
            ['budget/stopped', { reachedSeq: 11 }],
          ] as const
        ).map(([type, data], seq) => record(seq, type, data)),
        // A module this Rein does not load: logs keep its records readable when they are ignorable.
        { ...record(14, 'acme/audit', { note: 'checked' }), ignorable: true },
      ]),
    items: [
      {
        match: { kind: 'record', type: 'goal/set', tone: 'info' },
        shows: ['Goal set: Ship it (up to 3 continuation rounds)'],
      },
      { match: { kind: 'turn-start', turn: 1 }, shows: ['turn 1'] },
      { match: { kind: 'assistant' }, shows: [] },
      {
        match: { kind: 'tool', name: 'task', state: 'done', childSessionId: 'child-1' },
        shows: ['task'],
      },
      {
        match: { kind: 'record', type: 'guard/stopped', tone: 'stopped' },
        shows: [
          'Repetition guard stopped the turn: task was called 5 times with identical arguments. Stopped a loop of identical calls.',
        ],
      },
      { match: { kind: 'turn-end', reason: { kind: 'blocked' } }, shows: ['blocked'] },
      {
        match: { kind: 'record', type: 'goal/continued' },
        shows: ['Goal not yet complete — continuation round 1 of 3'],
      },
      {
        match: { kind: 'record', type: 'goal/stopped', tone: 'stopped' },
        shows: ['Goal stopped: the last round made no progress (no tool effects and nothing new said)'],
      },
      {
        match: { kind: 'record', type: 'budget/reached' },
        shows: ['Budget reached: per-turn cost — used $0.2500 of $0.2000. The work is paused.'],
      },
      {
        match: { kind: 'record', type: 'budget/raised' },
        shows: ['Budget raised: per-turn cost → $0.5000, per-turn steps → unlimited'],
      },
      {
        match: { kind: 'record', type: 'budget/stopped' },
        shows: ['Stopped at the budget: the paused work was dropped.'],
      },
      { match: { kind: 'event', type: 'acme/audit', data: { note: 'checked' } }, shows: ['acme/audit'] },
    ],
  },
];

/**
 * Checks that a rendering shows each expected item's phrases (case and runs of spaces aside): items in
 * table order, an item's own phrases in any order after the previous item's; returns the first phrase
 * missing, or undefined when all are there.
 */
export function missingPhrase(rendered: string, items: readonly ExpectedItem[]): string | undefined {
  const normalize = (text: string): string => text.replace(/\s+/g, ' ').toLowerCase();
  const haystack = normalize(rendered);
  let from = 0;
  for (const item of items) {
    let end = from;
    for (const phrase of item.shows) {
      const at = haystack.indexOf(normalize(phrase), from);
      if (at < 0) return phrase;
      end = Math.max(end, at + normalize(phrase).length);
    }
    from = end;
  }
  return undefined;
}
