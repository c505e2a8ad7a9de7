import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactionPlugin, createHarness } from '../../src/index.ts';
import type { Session } from '../../src/index.ts';
import { HookBus, Inbox, createUserMessage } from '../../src/internal.ts';
import {
  latestRequestHeader,
  loggedContextWindow,
  openCompactionId,
  requestHeaderBefore,
} from '../../src/plugins/compaction/session-lookups.ts';
import { DiskSessionStore } from '../../src/session/stores/index.ts';
import { encodeSessionSnapshot } from '../../src/session/stores/session-snapshot.ts';
import type { SessionSnapshot } from '../../src/session/stores/session-snapshot.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { generateSession } from '../../bench/resume.ts';
import { appendTextTurn } from '../support/session-turns.ts';

let directory: string;
let root: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'rein-snapshot-state-'));
  root = join(directory, 'sessions');
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

interface SavedSnapshot {
  events: number;
  surface: { nodes: number[] };
  scans: Record<string, { events: number; state: unknown }>;
  surfaceEvents: { seq: number; type: string }[];
}

const snapshotPath = (id: string): string => join(root, '.snapshots', `${id}.json`);

async function readSnapshot(id: string): Promise<SavedSnapshot> {
  return (JSON.parse(await readFile(snapshotPath(id), 'utf8')) as { snapshot: SavedSnapshot }).snapshot;
}

async function editSnapshot(id: string, edit: (snapshot: SavedSnapshot) => void): Promise<void> {
  const snapshot = await readSnapshot(id);
  edit(snapshot);
  // Saved with a fresh check, so that the store's own checks of the edited member are what is tested.
  await writeFile(snapshotPath(id), encodeSessionSnapshot(snapshot as unknown as SessionSnapshot));
}

/** The events read from the store and the model history, as comparable text. */
function stateOf(session: Session): Record<string, unknown> {
  return {
    length: session.length,
    nodes: [...session.surfaceNodes],
    messages: JSON.stringify(session.derivedMessages()),
    events: session.log.slice(0, session.firstLiveSeq).map((event) => JSON.stringify(event)),
  };
}

/** What the inbox of a session holds after replaying (or restoring) its log. */
function queuesOf(session: Session): unknown {
  const inbox = new Inbox({ session, hooks: new HookBus() });
  return { nextTurn: inbox.list('next-turn'), nextStep: inbox.list('next-step') };
}

/** Opens `id` from its snapshot and, from a copy of the file alone, by a full read. */
async function openBothWays(
  id: string,
): Promise<{ resumed: Session; full: Session; release: () => Promise<void> }> {
  const bare = join(directory, `bare-${Math.random().toString(36).slice(2)}`);
  await mkdir(bare, { recursive: true, mode: 0o700 });
  await copyFile(join(root, `${id}.jsonl`), join(bare, `${id}.jsonl`));
  const fromSnapshot = new DiskSessionStore({ root });
  const fromLog = new DiskSessionStore({ root: bare });
  const resumed = await fromSnapshot.open(id);
  const full = await fromLog.open(id);
  expect(full.deferredEvents).toBe(0);
  return {
    resumed,
    full,
    release: async () => {
      await fromSnapshot.release(resumed);
      await fromLog.release(full);
    },
  };
}

/**
 * The benchmark's long session (inbox splices, streamed steps), resumed once by an inbox that leaves a
 * message pending and a text turn, then released: its snapshot now holds the inbox's queues and the
 * surface events read from the file.
 */
async function resumedOnce(): Promise<void> {
  await generateSession(root, directory, 3_000);
  const store = new DiskSessionStore({ root });
  const session = await store.open('long');
  expect(session.deferredEvents).toBeGreaterThan(0);
  const inbox = new Inbox({ session, hooks: new HookBus() });
  inbox.append('next-turn', createUserMessage('Still pending when the process ends.'));
  appendTextTurn(session, 'One more question.', 'One more answer.');
  await store.release(session);
}

describe('what a snapshot saves beyond the surface', () => {
  it('saves the surface events read from the file and the scans, and resuming from them derives what a full read does', async () => {
    await resumedOnce();
    const snapshot = await readSnapshot('long');
    // Every surface event the resumed session read from the file is saved; the turn it appended is not.
    const saved = snapshot.surfaceEvents.map((event) => event.seq);
    expect(saved.length).toBeGreaterThan(100);
    expect(snapshot.surface.nodes.slice(0, saved.length)).toEqual(saved);
    expect(snapshot.surface.nodes.length - saved.length).toBe(2);
    expect(snapshot.scans['inbox/1']).toMatchObject({ events: snapshot.events });
    const opened = await openBothWays('long');
    expect(opened.resumed.deferredEvents).toBe(snapshot.events);
    expect(opened.resumed.scans.restored('inbox/1')?.events).toBe(snapshot.events);
    expect(stateOf(opened.resumed)).toEqual(stateOf(opened.full));
    const queues = queuesOf(opened.resumed);
    expect(queues).toEqual(queuesOf(opened.full));
    expect(JSON.stringify(queues)).toContain('Still pending when the process ends.');
    // The restored queue is frozen like a replayed one.
    const pending = new Inbox({ session: opened.resumed, hooks: new HookBus() }).list('next-turn')[0]!;
    expect(Object.isFrozen(pending) && Object.isFrozen(pending.content)).toBe(true);
    await opened.release();
  });

  it('goes on from a saved scan state that covers less than the snapshot (a scan not run since)', async () => {
    await resumedOnce();
    // Opened and released again without an inbox (a process that runs no agent), after a splice that
    // the inbox's saved state does not cover: the state is carried over, still covering the older prefix.
    const store = new DiskSessionStore({ root });
    const session = await store.open('long');
    const older = session.scans.restored('inbox/1')!.events;
    session.append('agent/inbox/spliced', {
      target: 'next-step',
      start: 0,
      inserted: [createUserMessage('Steer this.')],
    });
    appendTextTurn(session, 'Another question.', 'Another answer.');
    await store.release(session);
    expect((await readSnapshot('long')).scans['inbox/1']!.events).toBe(older);
    const opened = await openBothWays('long');
    expect(opened.resumed.scans.restored('inbox/1')?.events).toBe(older);
    const queues = queuesOf(opened.resumed);
    expect(queues).toEqual(queuesOf(opened.full));
    expect(JSON.stringify(queues)).toContain('Steer this.');
    await opened.release();
  });

  it('ignores a scan state that does not fit and rebuilds it from the log', async () => {
    await resumedOnce();
    const spoilers: ((snapshot: SavedSnapshot) => void)[] = [
      // Covering more than the snapshot does.
      (snapshot) => void (snapshot.scans['inbox/1']!.events = snapshot.events + 1),
      // Not the shape the inbox saves.
      (snapshot) => void (snapshot.scans['inbox/1']!.state = { 'next-turn': 'nothing' }),
      (snapshot) =>
        void (snapshot.scans['inbox/1']!.state = { 'next-turn': [{ role: 'assistant' }], 'next-step': [] }),
      (snapshot) => void (snapshot.scans['inbox/1'] = { state: [] } as never),
    ];
    for (const spoil of spoilers) {
      await editSnapshot('long', spoil);
      const opened = await openBothWays('long');
      expect(opened.resumed.deferredEvents).toBeGreaterThan(0);
      const queues = queuesOf(opened.resumed);
      expect(queues).toEqual(queuesOf(opened.full));
      expect(JSON.stringify(queues)).toContain('Still pending when the process ends.');
      expect(stateOf(opened.resumed)).toEqual(stateOf(opened.full));
      // The releases write the snapshot again (with the rebuilt state) for the next spoiler.
      await opened.release();
    }
  });

  it('ignores surface events that do not fit the log and decodes those events instead', async () => {
    await resumedOnce();
    const spoilers: ((snapshot: SavedSnapshot) => void)[] = [
      (snapshot) => void (snapshot.surfaceEvents[3]!.type = 'user/message'),
      (snapshot) => void (snapshot.surfaceEvents[3]!.seq = 1),
      (snapshot) => void (snapshot.surfaceEvents[3] = { seq: snapshot.surfaceEvents[3]!.seq } as never),
    ];
    for (const spoil of spoilers) {
      await editSnapshot('long', spoil);
      const opened = await openBothWays('long');
      expect(opened.resumed.deferredEvents).toBeGreaterThan(0);
      expect(stateOf(opened.resumed)).toEqual(stateOf(opened.full));
      await opened.release();
    }
  });

  it('uses nothing of a snapshot whose bytes changed after it was saved (its check no longer matches)', async () => {
    await resumedOnce();
    const path = snapshotPath('long');
    const text = await readFile(path, 'utf8');
    const saved = (JSON.parse(text) as { snapshot: SavedSnapshot }).snapshot.surfaceEvents;
    // A saved surface event's text altered in place: still well-formed JSON, still this session's and
    // still matching the log's bytes by every other member; only the check tells the damage apart.
    const message = JSON.stringify(saved.find((event) => event.type === 'user/message'));
    const altered = message.replace(
      /"text":"(.)/,
      (_whole, first: string) => `"text":"${first === 'X' ? 'Y' : 'X'}`,
    );
    expect(altered).not.toBe(message);
    await writeFile(path, text.replace(message, altered));
    const opened = await openBothWays('long');
    expect(opened.resumed.deferredEvents).toBe(0);
    expect(stateOf(opened.resumed)).toEqual(stateOf(opened.full));
    await opened.release();
  });

  it('uses no saved state when the snapshot does not match its log', async () => {
    await resumedOnce();
    const path = join(root, 'long.jsonl');
    const text = await readFile(path, 'utf8');
    // A hand edit inside the covered bytes that keeps the log valid: the file is read in full.
    await writeFile(path, text.replace('Please look at file 3 ', 'Please look at file 4 '));
    const session = await new DiskSessionStore({ root }).open('long');
    expect(session.deferredEvents).toBe(0);
    expect(session.scans.restored('inbox/1')).toBeUndefined();
    expect(JSON.stringify(queuesOf(session))).toContain('Still pending when the process ends.');
  });

  it('restores the compaction lookups of a loop session as a full scan builds them', async () => {
    const model = (): ScriptedProvider =>
      new ScriptedProvider({
        responses: [{ text: 'First answer.' }, { text: 'Second answer.' }],
        models: { 'test-model': { contextWindow: 8_000 } },
      });
    for (let run = 0; run < 2; run++) {
      const harness = createHarness({
        providers: [model()],
        store: new DiskSessionStore({ root }),
        plugins: [compactionPlugin({ onWarning: () => undefined })],
      });
      const options = { provider: 'scripted', model: 'test-model' };
      const agent =
        run === 0
          ? await harness.createAgent({ id: 'loop', ...options })
          : await harness.resumeAgent('loop', options);
      for (const prompt of ['First question.', 'Second question.']) {
        agent.followup(prompt);
        await agent.whenIdle();
      }
      await harness.dispose();
    }
    const snapshot = await readSnapshot('loop');
    expect(snapshot.scans['compaction-lookups/1']).toMatchObject({ events: snapshot.events });
    // Both runs logged the same envelope: it is saved once, the later one by its seq alone.
    const saved = (snapshot.scans['compaction-lookups/1']!.state as { headers: Record<string, unknown>[] })
      .headers;
    expect(saved.map((entry) => Object.keys(entry))).toEqual([['seq', 'header'], ['seq']]);
    const lookups = (session: Session): unknown => ({
      latest: latestRequestHeader(session),
      before: requestHeaderBefore(session, session.length)?.json,
      atEach: saved.map((entry) => requestHeaderBefore(session, (entry.seq as number) + 1)),
      window: loggedContextWindow(session, { provider: 'scripted', model: 'test-model' }),
      lock: openCompactionId(session),
    });
    const opened = await openBothWays('loop');
    expect(opened.resumed.scans.restored('compaction-lookups/1')).toBeDefined();
    expect(lookups(opened.resumed)).toEqual(lookups(opened.full));
    expect(lookups(opened.resumed)).toMatchObject({ window: 8_000, lock: undefined });
    expect(stateOf(opened.resumed)).toEqual(stateOf(opened.full));
    await opened.release();
    // A saved state whose first header is given by seq alone (nothing before it to repeat) does not
    // fit: it is ignored and the lookups are rebuilt from the log, as a full scan builds them.
    await editSnapshot('loop', (spoiled) => {
      const state = spoiled.scans['compaction-lookups/1']!.state as { headers: Record<string, unknown>[] };
      delete state.headers[0]!.header;
    });
    const respoiled = await openBothWays('loop');
    expect(respoiled.resumed.deferredEvents).toBeGreaterThan(0);
    expect(lookups(respoiled.resumed)).toEqual(lookups(respoiled.full));
    await respoiled.release();
  });
});
