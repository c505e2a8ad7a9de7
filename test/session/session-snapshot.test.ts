import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactSession, compactionPlugin, createHarness, defineTool } from '../../src/index.ts';
import type { Agent, Session } from '../../src/index.ts';
import { tallySession } from '../../src/session/session-summary.ts';
import { DiskSessionStore, SessionCorruptError } from '../../src/session/stores/index.ts';
import { LazyLogPrefix } from '../../src/session/stores/lazy-log-prefix.ts';
import { parseSessionLogHeader } from '../../src/session/stores/session-log-format.ts';
import {
  decodeSessionSnapshot,
  decodeSessionSnapshotBytes,
  encodeSessionSnapshot,
  encodeSessionSnapshotBytes,
} from '../../src/session/stores/session-snapshot.ts';
import type { SessionSnapshot } from '../../src/session/stores/session-snapshot.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { generateSession } from '../../bench/resume.ts';
import { writeTurnThenDie } from '../support/dead-writer.ts';
import { appendTextTurn } from '../support/session-turns.ts';

let directory: string;
let root: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'rein-snapshot-'));
  root = join(directory, 'sessions');
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const uuids = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Everything a resumed session derives from its log, as comparable values. */
function stateOf(session: Session): Record<string, unknown> {
  return {
    length: session.length,
    firstLiveSeq: session.firstLiveSeq,
    lastTurn: session.lastTurn,
    openTurn: session.openTurn,
    generation: session.replaceGeneration,
    nodes: [...session.surfaceNodes],
    messages: JSON.stringify(session.derivedMessages()),
    events: session.log.slice(0, session.firstLiveSeq).map((event) => JSON.stringify(event)),
    // What the open itself appended (its end-of-seed marker) carries the time of that open.
    live: session.log.slice(session.firstLiveSeq).map(({ time: _time, ...event }) => JSON.stringify(event)),
    types: Array.from({ length: session.length }, (_, seq) => session.log.typeAt(seq)),
  };
}

/** A second root holding a copy of one session's file and nothing else (no snapshot, no cache). */
async function copyWithoutSnapshot(id: string): Promise<string> {
  const bare = join(directory, `bare-${id}-${Math.random().toString(36).slice(2)}`);
  await mkdir(bare, { recursive: true, mode: 0o700 });
  await copyFile(join(root, `${id}.jsonl`), join(bare, `${id}.jsonl`));
  return bare;
}

/**
 * Opens a session from its snapshot and, from a copy of the same file, by a full read; checks that the
 * first really skipped its prefix and that both derive exactly the same state. Returns both, open.
 */
async function openBothWays(
  id: string,
  compared: (state: Record<string, unknown>) => unknown = (state) => state,
): Promise<{ resumed: Session; full: Session; stores: DiskSessionStore[] }> {
  const bare = await copyWithoutSnapshot(id);
  const fromSnapshot = new DiskSessionStore({ root });
  const fromLog = new DiskSessionStore({ root: bare });
  const resumed = await fromSnapshot.open(id);
  const full = await fromLog.open(id);
  expect(full.deferredEvents).toBe(0);
  expect(resumed.deferredEvents).toBeGreaterThan(0);
  expect(compared(stateOf(resumed))).toEqual(compared(stateOf(full)));
  return { resumed, full, stores: [fromSnapshot, fromLog] };
}

async function releaseBoth(opened: {
  resumed: Session;
  full: Session;
  stores: DiskSessionStore[];
}): Promise<void> {
  await opened.stores[0]!.release(opened.resumed);
  await opened.stores[1]!.release(opened.full);
}

const pathParameters = {
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
  additionalProperties: false,
} as const;

const readTool = defineTool<{ path: string }>({
  name: 'read_file',
  description: 'Reads a file',
  parameters: pathParameters,
  execute: ({ path }) => `contents of ${path}`,
});

/** A text of about `tokens` tokens. */
function filler(label: string, tokens: number): string {
  return `${label} `.padEnd(tokens * 4, '.');
}

/** Runs one prompt to the end. */
async function run(agent: Agent, text: string): Promise<void> {
  agent.followup(text);
  await agent.whenIdle();
}

/** A session made by the real loop: tool turns, a steered step, streamed answers, a compaction. */
async function loopSession(id: string, compact: boolean): Promise<ScriptedProvider> {
  let steered: Agent | undefined;
  const steeringTool = defineTool<{ path: string }>({
    name: 'steer_me',
    description: 'Reads a file while the user steers',
    parameters: pathParameters,
    execute: () => {
      steered?.steer('Also look at b.txt, please.');
      return 'a is read';
    },
  });
  const model = new ScriptedProvider({
    responses: [
      {
        text: ['Reading ', 'a.'],
        toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a' } }],
      },
      { text: ['A says ', 'hi.'], usage: { inputTokens: 40, outputTokens: 4 } },
      { text: 'Steering test.', toolCalls: [{ id: 'call_2', name: 'steer_me', arguments: { path: 'a' } }] },
      { text: 'Now b too.', toolCalls: [{ id: 'call_3', name: 'read_file', arguments: { path: 'b' } }] },
      { text: ['Both ', 'read.'], usage: { inputTokens: 90, outputTokens: 6 } },
      ...['one', 'two', 'three'].map((label) => ({ text: filler(`answer ${label}`, 200) })),
      { text: 'The user asked to read files; a and b were read.' },
      { text: 'After the summary.' },
    ],
    models: { 'test-model': { contextWindow: 4_000 } },
  });
  const harness = createHarness({
    providers: [model],
    tools: [readTool as never, steeringTool as never],
    store: new DiskSessionStore({ root }),
    plugins: [compactionPlugin({ onWarning: () => undefined })],
  });
  const agent = await harness.createAgent({ id, provider: 'scripted', model: 'test-model' });
  steered = agent;
  await run(agent, 'Read a.');
  await run(agent, 'Read a while I steer.');
  if (compact) {
    for (const label of ['one', 'two', 'three']) await run(agent, filler(`question ${label}`, 200));
    expect(await compactSession(harness, agent)).toMatchObject({ compacted: true });
    await run(agent, 'And now?');
  }
  await harness.dispose();
  return model;
}

describe('resuming a disk session from its snapshot', () => {
  it('derives exactly what a full read derives, over sessions of many shapes', async () => {
    // Streamed tool turns in the compact format (the benchmark's generator).
    await generateSession(root, directory, 3_000);
    // The real loop: tool calls, a steered step, usage; and the same with a compaction.
    await loopSession('tools', false);
    await loopSession('compacted', true);
    // Direct appends: text turns, and a fork of them (a seeded session).
    const store = new DiskSessionStore({ root });
    const plain = await store.create({ id: 'plain', title: 'plain' });
    for (let turn = 0; turn < 20; turn++) appendTextTurn(plain, `question ${turn}`, `answer ${turn}`);
    await store.release(plain);
    await store.fork('plain', { id: 'forked' });
    for (const id of ['long', 'tools', 'compacted', 'plain', 'forked']) {
      const opened = await openBothWays(id);
      // Events from the deferred prefix are frozen like any other.
      const first = opened.resumed.log.at(0)!;
      expect(Object.isFrozen(first) && Object.isFrozen(first.data)).toBe(true);
      await releaseBoth(opened);
    }
  });

  it('continues with the same next request, and snapshots again after more turns', async () => {
    const model = await loopSession('next', true);
    const bare = await copyWithoutSnapshot('next');
    const requests: string[] = [];
    for (const storeRoot of [root, bare]) {
      const replay = new ScriptedProvider({
        responses: [{ text: 'One more answer.' }],
        models: { 'test-model': { contextWindow: 4_000 } },
      });
      const harness = createHarness({
        providers: [replay],
        tools: [readTool as never],
        store: new DiskSessionStore({ root: storeRoot }),
        plugins: [compactionPlugin({ onWarning: () => undefined })],
      });
      const agent = await harness.resumeAgent('next', { provider: 'scripted', model: 'test-model' });
      // The snapshot covers the whole log as the last release left it.
      expect(agent.session.deferredEvents).toBe(storeRoot === root ? agent.session.firstLiveSeq : 0);
      await run(agent, 'One more question.');
      // The new prompt's id is new on each side: the history before it must be the same.
      requests.push(JSON.stringify(replay.requests.at(-1)!.messages).replace(uuids, '<id>'));
      const history = replay.requests.at(-1)!.messages.slice(0, -1);
      requests.push(JSON.stringify(history));
      await harness.dispose();
    }
    expect(requests[0]).toBe(requests[2]);
    expect(requests[1]).toBe(requests[3]);
    expect(model.requests.length).toBeGreaterThan(0);
    // The release after that turn wrote a new snapshot covering it: the next open defers everything.
    const opened = await openBothWays('next');
    expect(opened.resumed.deferredEvents).toBe(opened.resumed.firstLiveSeq);
    await releaseBoth(opened);
  });

  it('repairs an interrupted turn after the snapshot with the same records as a full read', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'crash' });
    for (let turn = 0; turn < 5; turn++) appendTextTurn(session, `q${turn}`, `a${turn}`);
    await store.release(session);
    // Reopened from the snapshot by another process, an open tool turn is written and that process is
    // killed holding the lock.
    const dead = writeTurnThenDie(root, 'crash');
    expect(dead.deferredEvents).toBeGreaterThan(0);
    // The repair records' message ids are new on each open: everything else must be the same.
    const opened = await openBothWays('crash', (state) => JSON.stringify(state).replace(uuids, '<id>'));
    const repaired = opened.resumed.firstLiveSeq;
    const repairs = opened.resumed.log.slice(repaired - 4, repaired).map((event) => event.type);
    expect(repairs).toEqual(['tool/result', 'tool/result', 'step/end', 'turn/end']);
    const end = opened.resumed.log.at(repaired - 1)!;
    expect((end.data as { reason: unknown }).reason).toEqual({ kind: 'interrupted' });
    // The repair went into the file: both reads of it now find the same closed turn.
    await releaseBoth(opened);
    const again = await openBothWays('crash');
    expect(again.resumed.log.at(repaired - 1)).toEqual(end);
    await releaseBoth(again);
  });

  it('tallies the listing row from the snapshot plus what followed, as a full tally does', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'tally' });
    for (let turn = 0; turn < 4; turn++) appendTextTurn(session, `q${turn}`, `a${turn}`);
    await store.release(session);
    const resumed = await store.open('tally');
    expect(resumed.deferredEvents).toBeGreaterThan(0);
    appendTextTurn(resumed, 'q4', 'a4');
    await store.release(resumed);
    const [row] = await store.list();
    const stored = await store.read('tally');
    expect(row).toEqual(tallySession(stored.header, stored.events).summary);
    // Deleting the session removes its snapshot too.
    await store.delete('tally');
    expect(await readdir(join(root, '.snapshots'))).toEqual([]);
  });
});

describe('a snapshot that does not match its log is ignored', () => {
  /** Writes a session with a snapshot, spoils it with `spoil`, and checks the open read the log in full. */
  async function expectFullRead(spoil: () => Promise<void>): Promise<void> {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'spoiled' });
    for (let turn = 0; turn < 6; turn++) appendTextTurn(session, `question ${turn}`, `answer ${turn}`);
    await store.release(session);
    await spoil();
    const bare = await copyWithoutSnapshot('spoiled');
    const openedStore = new DiskSessionStore({ root });
    const fullStore = new DiskSessionStore({ root: bare });
    const opened = await openedStore.open('spoiled');
    const full = await fullStore.open('spoiled');
    try {
      expect(opened.deferredEvents).toBe(0);
      expect(stateOf(opened)).toEqual(stateOf(full));
    } finally {
      // Released, not dropped: a session left open keeps its file handle until the collector closes it.
      await openedStore.release(opened);
      await fullStore.release(full);
    }
  }
  const snapshotPath = (): string => join(root, '.snapshots', 'spoiled.json');
  const editSnapshot = async (edit: (snapshot: Record<string, unknown>) => void): Promise<void> => {
    const snapshot = (
      JSON.parse(await readFile(snapshotPath(), 'utf8')) as { snapshot: Record<string, unknown> }
    ).snapshot;
    edit(snapshot);
    // Saved with a fresh check, so that the store's own checks of the edited member are what is tested.
    await writeFile(snapshotPath(), encodeSessionSnapshot(snapshot as unknown as SessionSnapshot));
  };

  it('when it is torn', async () => {
    await expectFullRead(async () => truncate(snapshotPath(), (await stat(snapshotPath())).size - 10));
  });

  it('when one byte of its JSON changed, inside a non-ASCII character', async () => {
    await expectFullRead(async () => {
      // Opened and released again: the snapshot now holds the surface events read from the file.
      const store = new DiskSessionStore({ root });
      await store.release(await store.open('spoiled'));
      const bytes = await readFile(snapshotPath());
      // The answers are ASCII; the snapshot's JSON gets a multi-byte character edited into a copy of it.
      const text = bytes.toString('utf8');
      const at = text.indexOf('answer 5');
      expect(at).toBeGreaterThan(0);
      const edited = Buffer.from(`${text.slice(0, at)}ånswer 5${text.slice(at + 'answer 5'.length)}`);
      const position = Buffer.byteLength(text.slice(0, at)) + 1;
      expect(edited[position]).toBe(0xa5);
      edited[position] = 0xa4;
      await writeFile(snapshotPath(), edited);
    });
  });

  it('when it is of an older or unknown format', async () => {
    await expectFullRead(() => editSnapshot((snapshot) => void (snapshot.version = 0)));
  });

  it('when it comes from another session file', async () => {
    await expectFullRead(async () => {
      const store = new DiskSessionStore({ root });
      const other = await store.create({ id: 'other' });
      for (let turn = 0; turn < 6; turn++) appendTextTurn(other, `question ${turn}`, `answer ${turn}`);
      await store.release(other);
      const snapshot = (
        JSON.parse(await readFile(join(root, '.snapshots', 'other.json'), 'utf8')) as {
          snapshot: { id: string; tally: { summary: { id: string } } };
        }
      ).snapshot;
      snapshot.id = 'spoiled';
      snapshot.tally.summary.id = 'spoiled';
      await writeFile(snapshotPath(), encodeSessionSnapshot(snapshot as unknown as SessionSnapshot));
    });
  });

  it('when the log was edited by hand inside the covered bytes', async () => {
    await expectFullRead(async () => {
      const path = join(root, 'spoiled.jsonl');
      const text = await readFile(path, 'utf8');
      await writeFile(path, text.replace('answer 2', 'ANSWER 2'));
    });
  });

  it('when the log is shorter than what it covers (replaced or truncated)', async () => {
    await expectFullRead(async () => {
      const path = join(root, 'spoiled.jsonl');
      const text = await readFile(path, 'utf8');
      const lines = text.split('\n');
      await writeFile(path, `${lines.slice(0, -8).join('\n')}\n`);
    });
  });

  it('when its surface names an event that is not a message', async () => {
    await expectFullRead(() =>
      editSnapshot((snapshot) => void ((snapshot.surface as { nodes: number[] }).nodes = [0])),
    );
  });

  it('when its event count does not match the covered lines', async () => {
    await expectFullRead(() =>
      editSnapshot((snapshot) => void (snapshot.events = (snapshot.events as number) - 1)),
    );
  });
});

describe('the stored form of a snapshot', () => {
  it('is the same bytes whether encoded as text (PostgreSQL) or as bytes (the disk), and decodes alike', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'stored' });
    for (let turn = 0; turn < 4; turn++)
      appendTextTurn(session, `question ${turn} – é`, `answer ${turn} — ✓`);
    await store.release(session);
    // Opened and released again: the snapshot now holds the surface events read from the file.
    await store.release(await store.open('stored'));
    const bytes = await readFile(join(root, '.snapshots', 'stored.json'));
    const snapshot = decodeSessionSnapshotBytes(bytes, 'stored');
    expect(snapshot).toBeDefined();
    expect(snapshot!.surfaceEvents.length).toBeGreaterThan(0);
    expect(JSON.stringify(snapshot!.surfaceEvents)).toContain('— ✓');
    expect(decodeSessionSnapshot(bytes.toString('utf8'), 'stored')).toEqual(snapshot);
    expect(encodeSessionSnapshotBytes(snapshot!)).toEqual(Buffer.from(encodeSessionSnapshot(snapshot!)));
    expect(encodeSessionSnapshotBytes(snapshot!)).toEqual(bytes);
    expect(decodeSessionSnapshotBytes(bytes, 'other')).toBeUndefined();
    const damaged = Buffer.from(bytes);
    damaged[damaged.length - 2] = damaged[damaged.length - 2]! ^ 1;
    expect(decodeSessionSnapshotBytes(damaged, 'stored')).toBeUndefined();
  });
});

describe('corruption inside the bytes a snapshot covers', () => {
  it('is found at open, with its line and byte offset, exactly as a full read reports it', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'rotten' });
    for (let turn = 0; turn < 6; turn++) appendTextTurn(session, `question ${turn}`, `answer ${turn}`);
    await store.release(session);
    const path = join(root, 'rotten.jsonl');
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[9] = `${lines[9]!.slice(0, -3)}#`;
    await writeFile(path, lines.join('\n'));
    const offset = Buffer.byteLength(lines.slice(0, 9).join('\n')) + 1;
    const error = await new DiskSessionStore({ root }).open('rotten').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SessionCorruptError);
    expect(error).toMatchObject({ code: 'SESSION_CORRUPT', line: 10, offset, goodEvents: 8 });
  });

  it('is a typed error with the offset when a deferred event cannot be decoded', () => {
    // The prefix reader on its own: a chunk line whose JSON is broken after its kind and time.
    const text =
      `${JSON.stringify({ type: 'session', id: 'raw', createdAt: 1, version: 1 })}\n` +
      '[8,1,0]\n[6,0,1]\n[3,0,[0,"text"]]\n[1,0,"hel\n[7,0,0]\n[9,0,{"kind":"completed"}]\n';
    const bytes = Buffer.from(text);
    const header = parseSessionLogHeader(bytes, { id: 'raw', path: 'raw.jsonl' });
    const prefix = LazyLogPrefix.scan(
      {
        id: 'raw',
        path: 'raw.jsonl',
        createdAt: 1,
        bytes,
        start: header.headerEnd + 1,
        end: header.completeBytes,
      },
      6,
    );
    if (typeof prefix === 'string') throw new Error(prefix);
    expect(prefix.typeAt(3)).toBe('assistant/chunk');
    const offset = text.indexOf('[1,0,"hel');
    const error = (() => {
      try {
        prefix.at(3);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(SessionCorruptError);
    expect(error).toMatchObject({ line: 5, offset, goodEvents: 3 });
  });
});
