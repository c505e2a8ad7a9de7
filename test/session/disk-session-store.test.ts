import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import { createHarness, createUserMessage } from '../../src/index.ts';
import { DiskSessionStore, SessionCorruptError, SessionLockedError } from '../../src/session/stores/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { scenarioTools } from '../fixtures/session/crash-scenario-script.ts';
import { appendOpenToolTurn, appendTextTurn } from '../support/session-turns.ts';

let directory: string;
let root: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'rein-disk-'));
  root = join(directory, 'sessions');
});

afterEach(async () => {
  await chmod(directory, 0o700).catch(() => {
    // Already removed or never restricted.
  });
  await rm(directory, { recursive: true, force: true });
});

function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (error as { code?: string }).code,
  );
}

/** Runs a real agent (a text turn and a tool turn) on a disk store and returns the file's bytes. */
async function realSession(id: string): Promise<Buffer> {
  const model = new ScriptedProvider({
    responses: [
      { text: ['Hello ', 'there.'], usage: { inputTokens: 10, outputTokens: 3 } },
      { text: 'Reading.', toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.txt' } }] },
      { text: ['The file ', 'says hi.'], usage: { inputTokens: 30, outputTokens: 5 } },
    ],
  });
  const harness = createHarness({
    providers: [model],
    tools: scenarioTools(),
    store: new DiskSessionStore({ root }),
  });
  const agent = await harness.createAgent({ id, provider: 'scripted', model: 'test-model', cwd: '/project' });
  agent.followup('Hi');
  await agent.whenIdle();
  agent.followup('Read a.txt');
  await agent.whenIdle();
  await harness.dispose();
  return readFile(join(root, `${id}.jsonl`));
}

/** The byte offsets where each line starts (and the file's end). */
function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let index = 0; index < bytes.length; index++) if (bytes[index] === 0x0a) starts.push(index + 1);
  return starts;
}

/**
 * Whether the running call's `tool/call` is in its session file now: reads never lock, so this is what
 * another process would find there.
 */
async function callOnDisk(context: { session: { id: string }; callId: string }): Promise<boolean> {
  const { events } = await new DiskSessionStore({ root }).read(context.session.id);
  return events.some(
    (event) => event.type === 'tool/call' && (event.data as { callId: string }).callId === context.callId,
  );
}

describe('DiskSessionStore: the file', () => {
  it('is a header line then one compact line per event (format 1), 0600 in a 0700 directory', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'format', cwd: '/project', createdAt: 42 });
    appendTextTurn(session, 'Hello', 'Hi');
    await store.release(session);
    const text = await readFile(join(root, 'format.jsonl'), 'utf8');
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(JSON.parse(lines[0]!)).toEqual({
      type: 'session',
      version: 1,
      id: 'format',
      cwd: '/project',
      createdAt: 42,
    });
    // One JSON value per event line; what loads is what was committed, with the envelope's version 0.
    expect(lines).toHaveLength(session.length + 1);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    const stored = await new DiskSessionStore({ root }).read('format');
    expect(stored.header).toEqual({ ...session.header });
    expect(stored.header.version).toBe(0);
    expect(stored.events.map((event) => JSON.stringify(event))).toEqual(
      session.events.map((event) => JSON.stringify(event)),
    );
    // The export is the full envelope of every event (format 0), as PostgreSQL rows hold them.
    const exported = await store.exportLog('format');
    expect(exported.split('\n')).toEqual([
      JSON.stringify({ type: 'session', ...session.header }),
      ...session.events.map((event) => JSON.stringify(event)),
      '',
    ]);
    expect((await stat(join(root, 'format.jsonl'))).mode & 0o777).toBe(0o600);
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    // No lock or temporary file is left behind; the listing cache and the snapshots hold one entry each.
    expect((await readdir(root)).sort()).toEqual(['.snapshots', '.summaries', 'format.jsonl']);
    expect(await readdir(join(root, '.summaries'))).toEqual(['format.json']);
    expect(await readdir(join(root, '.snapshots'))).toEqual(['format.json']);
  });

  it('makes the log durable before a tool body with side effects, not before a read-only one', async () => {
    const seenOnDisk: Record<string, boolean> = {};
    const tools = scenarioTools().map(
      (tool) =>
        ({
          ...tool,
          execute: async (_args: never, context: { session: { id: string }; callId: string }) => {
            seenOnDisk[context.callId] = await callOnDisk(context);
            return 'ok';
          },
        }) as unknown as typeof tool,
    );
    const model = new ScriptedProvider({
      responses: [
        { toolCalls: [{ id: 'call_read', name: 'read_file', arguments: { path: 'a' } }] },
        { toolCalls: [{ id: 'call_write', name: 'write_file', arguments: { path: 'b', text: 'x' } }] },
        { text: 'done' },
      ],
    });
    // A long batch window: only a checkpoint can have put a call on disk.
    const store = new DiskSessionStore({ root, batchWindowMs: 60_000 });
    const harness = createHarness({ providers: [model], tools, store });
    const agent = await harness.createAgent({ id: 'durable', provider: 'scripted', model: 'test-model' });
    agent.followup('go');
    await agent.whenIdle();
    // The read-only call ran on a log still in memory; the write found its call (and all before it) on disk.
    expect(seenOnDisk).toEqual({ call_read: false, call_write: true });
    // Turn end is a checkpoint too: another reader (as another process would) sees the whole turn
    // while this agent still holds the session for writing.
    const stored = await new DiskSessionStore({ root }).read('durable');
    expect(stored.events).toEqual(JSON.parse(JSON.stringify(agent.session.events)));
    await harness.dispose();
  });

  describe('fdatasyncs per step', () => {
    const steps = 12;

    /** Runs one turn of `steps` tool steps and a final answer; returns the durable counts reported per sync. */
    async function syncsOfTurn(
      effect: 'read' | 'write',
      durability: 'power-loss' | 'process-crash',
    ): Promise<{ syncs: number[]; events: readonly AnySessionEvent[]; bodies: number[]; onDisk: boolean[] }> {
      const syncs: number[] = [];
      const bodies: number[] = [];
      // For a writing tool: whether each body found its own call in the file (as another process would).
      const onDisk: boolean[] = [];
      const tool = {
        name: 'touch',
        description: 'Changes (or reads) nothing in particular',
        effect,
        parameters: { type: 'object', properties: {}, additionalProperties: false },
        execute: async (_args: never, context: { session: { id: string }; callId: string }) => {
          bodies.push(syncs.length);
          if (effect === 'write') onDisk.push(await callOnDisk(context));
          return 'ok';
        },
      };
      const model = new ScriptedProvider({
        responses: [
          ...Array.from({ length: steps }, (_, index) => ({
            toolCalls: [{ id: `call_${index}`, name: 'touch', arguments: {} }],
          })),
          { text: 'done' },
        ],
      });
      // A long batch window: no background write or sync can land inside the turn.
      const store = new DiskSessionStore({
        root,
        batchWindowMs: 60_000,
        durability,
        onDurable: (_id, count) => syncs.push(count),
      });
      const harness = createHarness({ providers: [model], tools: [tool as never], store });
      const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
      agent.followup('go');
      await agent.whenIdle();
      const events = agent.session.events;
      // The turn end is a checkpoint in both modes: another reader sees the whole turn at once.
      const stored = await new DiskSessionStore({ root }).read(agent.session.id);
      expect(stored.events).toEqual(JSON.parse(JSON.stringify(events)));
      const atTurnEnd = [...syncs];
      // An explicit flush (as before a message is acknowledged to a remote client) forces storage in
      // both modes: under process-crash it syncs what the turn end only wrote.
      await store.flush(agent.session);
      expect(syncs.slice(atTurnEnd.length)).toEqual(durability === 'process-crash' ? [events.length] : []);
      await harness.dispose();
      return { syncs: atTurnEnd, events, bodies, onDisk };
    }

    it('power-loss, a writing tool: exactly one fdatasync per step, before its body, covering every event before it', async () => {
      const { syncs, events, bodies, onDisk } = await syncsOfTurn('write', 'power-loss');
      expect(onDisk).toEqual(Array.from({ length: steps }, () => true));
      // One sync before each body, one at turn end; none before requests (they go on while it runs).
      expect(syncs).toHaveLength(steps + 1);
      expect(bodies).toEqual(Array.from({ length: steps }, (_, index) => index + 1));
      const calls = events.filter((event) => event.type === 'tool/call');
      for (let index = 0; index < steps; index++) {
        // Every event up to and including the call was durable when its body ran.
        expect(syncs[index]).toBe(calls[index]!.seq + 1);
      }
      expect(syncs.at(-1)).toBe(events.length);
    });

    it('power-loss, a read-only tool: no fdatasync inside the turn, one at its end', async () => {
      const { syncs, events } = await syncsOfTurn('read', 'power-loss');
      expect(syncs).toEqual([events.length]);
    });

    it('process-crash: no fdatasync in the turn or at its end; a writing body finds its call written to the OS', async () => {
      const { syncs, bodies, onDisk } = await syncsOfTurn('write', 'process-crash');
      expect(syncs).toEqual([]);
      expect(bodies).toEqual(Array.from({ length: steps }, () => 0));
      expect(onDisk).toEqual(Array.from({ length: steps }, () => true));
    });

    it('process-crash, a read-only tool: no fdatasync in the turn or at its end', async () => {
      const { syncs } = await syncsOfTurn('read', 'process-crash');
      expect(syncs).toEqual([]);
    });
  });
});

describe('DiskSessionStore: the batch window', () => {
  // The writer encodes committed events in groups; a group that no checkpoint drains must still be
  // written within the batch window, as each event was when it was encoded on its own.
  it('writes events no checkpoint asked for within the batch window, one event or many', async () => {
    const store = new DiskSessionStore({ root, batchWindowMs: 20, durability: 'process-crash' });
    const session = await store.create({ id: 'window' });
    const path = join(root, 'window.jsonl');
    const linesOnDisk = async (count: number): Promise<number> => {
      const deadline = Date.now() + 5_000;
      let lines = 0;
      while (Date.now() < deadline) {
        lines = (await readFile(path, 'utf8')).split('\n').length - 1;
        if (lines >= count) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return lines;
    };
    session.append('turn/start', { turn: 1 });
    expect(await linesOnDisk(2)).toBe(2);
    for (let step = 1; step <= 20; step++) {
      session.append('step/start', { turn: 1, step });
      session.append('step/end', { turn: 1, step });
    }
    expect(await linesOnDisk(42)).toBe(42);
    const stored = await new DiskSessionStore({ root }).read('window');
    expect(stored.events).toEqual(JSON.parse(JSON.stringify(session.events)));
    await store.release(session);
  });
});

describe('DiskSessionStore: loading damaged logs', () => {
  it('torn-tail sweep: every cut inside the last three records loads the complete prefix and appends continue seq', async () => {
    const bytes = await realSession('torn');
    const path = join(root, 'torn.jsonl');
    const starts = lineStarts(bytes);
    expect(starts.at(-1)).toBe(bytes.length);
    const records = starts.length - 1; // header + events
    const complete: AnySessionEvent[] = (await new DiskSessionStore({ root }).read('torn')).events;
    expect(complete).toHaveLength(records - 1);
    const sweepFrom = starts[records - 3]!;
    let opened = 0;
    for (let cut = sweepFrom; cut < bytes.length; cut++) {
      await writeFile(path, bytes.subarray(0, cut));
      // The complete records are those whose newline lies before the cut.
      const kept = starts.filter((start) => start > 0 && start <= cut).length - 1;
      const store = new DiskSessionStore({ root });
      const read = await store.read('torn');
      expect(read.events).toEqual(complete.slice(0, kept));
      // Writing: at every record boundary and around it, and at every 7th byte in between
      // (each open is several fsyncs; the read above covers every byte).
      const nearBoundary = starts.some((start) => Math.abs(start - cut) <= 1);
      if (!nearBoundary && cut % 7 !== 0) continue;
      opened++;
      const session = await store.open('torn');
      session.append('user/message', createUserMessage('after the tear'), { surfaceOp: 'append' });
      await store.release(session);
      const after = (await store.read('torn')).events;
      expect(after.slice(0, kept)).toEqual(complete.slice(0, kept));
      expect(after.map((event) => event.seq)).toEqual(after.map((_, index) => index));
      expect(after.at(-1)).toMatchObject({ type: 'user/message', seq: after.length - 1 });
      // The torn bytes are gone: the file is exactly its records, each a complete line.
      const text = await readFile(path, 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      expect(text.split('\n').length - 2).toBe(after.length);
    }
    expect(opened).toBeGreaterThan(20);
  }, 120_000);

  it('refuses corruption before the tail with its line and byte offset, and changes nothing', async () => {
    const bytes = await realSession('bad');
    const path = join(root, 'bad.jsonl');
    const starts = lineStarts(bytes);
    // Break the 6th event (line 7) in the middle of the file.
    const damaged = Buffer.from(bytes);
    damaged[starts[6]! + 1] = 0x78; // the line's second byte becomes 'x': no longer JSON
    await writeFile(path, damaged);
    const store = new DiskSessionStore({ root });
    for (const attempt of [store.read('bad'), store.open('bad')]) {
      const error = await attempt.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(SessionCorruptError);
      expect(error).toMatchObject({ code: 'SESSION_CORRUPT', line: 7, offset: starts[6], goodEvents: 5 });
      expect((error as Error).message).toContain(`line 7, byte offset ${starts[6]}`);
      expect((error as Error).message).toContain('salvage');
    }
    expect((await readFile(path)).equals(damaged)).toBe(true);
    expect(existsSync(join(root, 'bad.lock'))).toBe(false);
    // The listing shows the readable part and where it stops.
    const rows = await store.list();
    expect(rows).toMatchObject([{ id: 'bad', events: 5, corrupt: { line: 7, offset: starts[6] } }]);
    // The offered way out: a fork from the last good record (its open turn closed as interrupted).
    const fork = await store.fork('bad', { salvage: true, id: 'bad-salvaged' });
    expect(fork).toMatchObject({ parentSession: 'bad', origin: 'fork' });
    const salvaged = await store.open('bad-salvaged');
    const intact = (
      await new DiskSessionStore({ root: join(root, 'intact') }).importLog(bytes.toString('utf8'))
    ).id;
    const good = (await new DiskSessionStore({ root: join(root, 'intact') }).read(intact)).events.slice(0, 5);
    expect(salvaged.events.slice(0, 5)).toEqual(good);
    expect(salvaged.openTurn).toBeUndefined();
    await store.release(salvaged);
    expect((await readFile(path)).equals(damaged)).toBe(true);
  });

  it('refuses a newer format version, a foreign file and an unknown required event type, untouched', async () => {
    const store = new DiskSessionStore({ root });
    await mkdir(root, { recursive: true });
    const cases: [string, string, string][] = [
      ['newer', `{"type":"session","version":2,"id":"newer","createdAt":1}\n`, 'SESSION_VERSION'],
      ['foreign', 'just some notes\nnot json at all\n', 'SESSION_CORRUPT'],
      ['empty', '', 'SESSION_CORRUPT'],
      [
        'unknown',
        `{"type":"session","version":0,"id":"unknown","createdAt":1}\n{"type":"future/thing","seq":0,"time":1,"data":{}}\n`,
        'SESSION_VERSION',
      ],
      ['other', `{"type":"session","version":0,"id":"someone-else","createdAt":1}\n`, 'SESSION_CORRUPT'],
    ];
    for (const [id, text] of cases) await writeFile(join(root, `${id}.jsonl`), text);
    for (const [id, text, code] of cases) {
      expect(await codeOf(store.read(id)), id).toBe(code);
      expect(await codeOf(store.open(id)), id).toBe(code);
      expect(await readFile(join(root, `${id}.jsonl`), 'utf8')).toBe(text);
      expect(existsSync(join(root, `${id}.lock`))).toBe(false);
    }
    expect(await store.list()).toEqual([]);
    // A file that is gone by the time it is looked at (here a link to nothing) has no row either.
    await symlink(join(root, 'nowhere.jsonl'), join(root, 'vanished.jsonl'));
    expect(await store.list()).toEqual([]);
    // An unknown type marked ignorable is kept and loads.
    await writeFile(
      join(root, 'tolerant.jsonl'),
      `{"type":"session","version":0,"id":"tolerant","createdAt":1}\n{"type":"future/note","seq":0,"time":1,"data":{"x":1},"ignorable":true}\n`,
    );
    const session = await store.open('tolerant');
    expect(session.events.map((event) => event.type)).toEqual(['future/note', 'session/end-seed']);
    await store.release(session);
  });

  it('refuses ids that are not file names, and reports an unwritable directory clearly', async () => {
    const store = new DiskSessionStore({ root });
    for (const id of ['../escape', 'a/b', '.hidden', '', 'x'.repeat(200)]) {
      expect(await codeOf(store.create({ id })), id).toBe('INVALID_SESSION_ID');
      expect(await codeOf(store.read(id)), id).toBe('INVALID_SESSION_ID');
    }
    expect(existsSync(join(directory, 'escape.jsonl'))).toBe(false);
    // A path through a regular file can never be a directory, whoever runs the test.
    await writeFile(join(directory, 'plain-file'), 'x');
    const blocked = new DiskSessionStore({ root: join(directory, 'plain-file', 'sessions') });
    const error = await blocked.create({ id: 's' }).then(
      () => undefined,
      (caught: unknown) => caught as Error & { code: string },
    );
    expect(error?.code).toBe('SESSION_IO');
    expect(error?.message).toContain('plain-file');
    expect(await readFile(join(directory, 'plain-file'), 'utf8')).toBe('x');
  });
});

describe('DiskSessionStore: one writer per session', () => {
  async function storedSession(id: string): Promise<void> {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id });
    appendTextTurn(session, 'hello', 'hi');
    await store.release(session);
  }

  it('takes over a lock whose holder died, or whose pid now belongs to another process', async () => {
    await storedSession('stale');
    const lock = join(root, 'stale.lock');
    // A pid that exited: spawn a process, let it finish, and use its pid.
    const deadPid = Number(
      execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']),
    );
    await writeFile(lock, JSON.stringify({ pid: deadPid, host: hostname(), acquiredAt: 1, token: 'dead' }));
    const store = new DiskSessionStore({ root });
    const session = await store.open('stale');
    expect(JSON.parse(await readFile(lock, 'utf8'))).toMatchObject({ pid: process.pid });
    await store.release(session);
    expect(existsSync(lock)).toBe(false);
    // This very pid, but recorded with another process start: a reused pid, so the lock is stale.
    await writeFile(
      lock,
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        processStart: 'another-boot:1',
        acquiredAt: 1,
        token: 'old',
      }),
    );
    const again = await store.open('stale');
    await store.release(again);
    expect(existsSync(lock)).toBe(false);
  });

  it('refuses a live holder, naming its pid and host, while reads stay allowed', async () => {
    await storedSession('held');
    const lock = join(root, 'held.lock');
    // The parent of this test process is alive for the whole test.
    const holder = { pid: process.ppid, host: hostname(), acquiredAt: Date.now(), token: 'live' };
    await writeFile(lock, JSON.stringify(holder));
    const store = new DiskSessionStore({ root });
    const error = await store.open('held').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SessionLockedError);
    expect(error).toMatchObject({ code: 'SESSION_LOCKED', holder: { pid: process.ppid, host: hostname() } });
    expect((error as Error).message).toContain(`pid ${process.ppid} on host ${hostname()}`);
    expect(await codeOf(store.delete('held'))).toBe('SESSION_LOCKED');
    expect((await store.read('held')).events.length).toBeGreaterThan(0);
    expect(await store.holderOf('held')).toMatchObject({ pid: process.ppid });
    expect(JSON.parse(await readFile(lock, 'utf8'))).toEqual(holder);
  });

  it('forks a session another live process writes before its open turn, without repairing it', async () => {
    const writer = new DiskSessionStore({ root });
    const session = await writer.create({ id: 'running' });
    appendTextTurn(session, 'one', 'a');
    const boundary = session.length;
    appendOpenToolTurn(session);
    await writer.flush(session);
    // Hand the lock to a live process that is not this store, as a second process would see it.
    await writeFile(
      join(root, 'running.lock'),
      JSON.stringify({ pid: process.ppid, host: hostname(), acquiredAt: Date.now(), token: 'other' }),
    );
    const reader = new DiskSessionStore({ root });
    const fork = await reader.fork('running', { id: 'running-fork' });
    expect(fork.seedLength).toBe(boundary);
    const events = (await reader.read('running-fork')).events;
    expect(events.map((event) => event.type)).not.toContain('tool/call');
    // Releasing leaves the other holder's lock in place (it is not ours).
    await writer.release(session);
    expect(JSON.parse(await readFile(join(root, 'running.lock'), 'utf8'))).toMatchObject({ token: 'other' });
  });
});
