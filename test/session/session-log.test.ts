import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent, StreamChunk } from '../../src/internal.ts';
import { DiskSessionStore, HookBus, Session, SessionLog, packHeldEvents } from '../../src/internal.ts';
import { fixture, readFileTool } from '../core/support.ts';

function session(hooks?: HookBus): Session {
  return new Session({ header: { version: 0, id: 's1', createdAt: 0 }, ...(hooks ? { hooks } : {}) });
}

/** Every chunk shape a stream produces, in two blocks whose deltas interleave. */
const streamed: readonly StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'reasoning' },
  { type: 'reasoning-delta', index: 0, text: 'think' },
  { type: 'block-start', index: 1, blockType: 'text' },
  { type: 'text-delta', index: 1, text: 'Hel' },
  { type: 'reasoning-delta', index: 0, text: 'ing' },
  { type: 'text-delta', index: 1, text: 'lo' },
  { type: 'text-delta', index: 1, text: '' },
  { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'thinking' } },
  { type: 'block-end', index: 1, block: { type: 'text', text: 'Hello' } },
  { type: 'tool-call-delta', index: 2, id: 'c1', name: 'read', argumentsDelta: '{}' },
  { type: 'block-start', index: 3, blockType: 'tool-call' },
  { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } },
  { type: 'finish', reason: { kind: 'stop' } },
  { type: 'finish', reason: { kind: 'tool-calls' } },
  { type: 'finish', reason: { kind: 'max-tokens' } },
  { type: 'finish', reason: { kind: 'error', failure: { message: 'm', code: 'X' } } },
  { type: 'finish', reason: { kind: 'stop' }, replayState: { blocks: [] } },
];

/** Two turns of two steps each, every step streaming `chunks`; returns what `append` handed back. */
function streamTurns(log: Session, chunks: readonly StreamChunk[]): AnySessionEvent[] {
  const appended: AnySessionEvent[] = [];
  for (let turn = 1; turn <= 2; turn++) {
    appended.push(log.append('turn/start', { turn }));
    for (let step = 1; step <= 2; step++) {
      appended.push(log.append('step/start', { turn, step }));
      for (const chunk of chunks) appended.push(log.append('assistant/chunk', { turn, step, chunk }));
      appended.push(log.append('step/end', { turn, step }));
    }
    appended.push(log.append('turn/end', { turn, reason: { kind: 'completed' } }));
  }
  return appended;
}

function deepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(deepFrozen);
}

describe('session log: packed chunk events', () => {
  it('reads back every chunk event equal to the committed one: same keys in the same order, deep-frozen', () => {
    const log = session();
    const appended = streamTurns(log, streamed);
    expect(log.length).toBe(appended.length);
    for (let seq = 0; seq < appended.length; seq++) {
      const read = log.log.at(seq)!;
      expect(read).toStrictEqual(appended[seq]);
      expect(JSON.stringify(read)).toBe(JSON.stringify(appended[seq]));
      expect(deepFrozen(read)).toBe(true);
      expect(log.log.typeAt(seq)).toBe(appended[seq]!.type);
    }
    expect(log.events).toStrictEqual(appended);
    expect([...log.log]).toStrictEqual(appended);
  });

  it('rebuilds chunk and boundary events, and keeps every other event as the very object committed', () => {
    const log = session();
    const appended = streamTurns(log, streamed);
    appended.push(log.append('turn/start', { turn: 3 }));
    appended.push(
      log.append('turn/end', { turn: 3, reason: { kind: 'error', error: { message: 'm', code: 'X' } } }),
    );
    packHeldEvents(log.log as SessionLog);
    const packed = new Set(['assistant/chunk', 'turn/start', 'step/start', 'step/end']);
    for (const event of appended) {
      const read = log.log.at(event.seq);
      expect(read).toStrictEqual(event);
      const rebuilt =
        packed.has(event.type) || (event.type === 'turn/end' && event.seq !== appended.at(-1)!.seq);
      if (rebuilt) expect(read).not.toBe(event);
      else expect(read).toBe(event);
    }
  });

  it('rebuilds every simple turn/end reason, and keeps boundary events it cannot pack exactly', () => {
    const raw = new SessionLog();
    const reasons = ['completed', 'max-tokens', 'blocked', 'aborted', 'interrupted'];
    const frozen = (event: Record<string, unknown>): AnySessionEvent =>
      Object.freeze(event) as unknown as AnySessionEvent;
    const packable = reasons.map((kind, seq) =>
      frozen({
        type: 'turn/end',
        seq,
        time: 1_796_000_000_000 + seq,
        data: Object.freeze({ turn: seq, reason: Object.freeze({ kind }) }),
      }),
    );
    const kept = [
      // A reason with more than its kind, an unknown kind, a turn or step too large to pack, extra members.
      { type: 'turn/end', data: { turn: 1, reason: Object.freeze({ kind: 'completed', note: 1 }) } },
      { type: 'turn/end', data: { turn: 1, reason: Object.freeze({ kind: 'later' }) } },
      { type: 'turn/start', data: { turn: 1 << 20 } },
      { type: 'step/start', data: { turn: 1, step: 1 << 16 } },
      { type: 'step/end', data: { turn: 1, step: 1, extra: true } },
      { type: 'step/end', data: { step: 1, turn: 1 } },
      { type: 'turn/start', data: { turn: 1.5 } },
      // Times a packed entry cannot hold exactly: fractional, negative, beyond its range.
      { type: 'turn/start', data: { turn: 1 }, time: 1.5 },
      { type: 'turn/start', data: { turn: 1 }, time: -1 },
      { type: 'turn/start', data: { turn: 1 }, time: 2 ** 50 },
    ].map((event: { type: string; data: object; time?: number }, index) =>
      frozen({
        type: event.type,
        seq: packable.length + index,
        time: event.time ?? 1,
        data: Object.freeze(event.data),
      }),
    );
    for (const event of [...packable, ...kept]) raw.push(event);
    packHeldEvents(raw);
    for (const event of packable) {
      expect(raw.at(event.seq)).toStrictEqual(event);
      expect(raw.at(event.seq)).not.toBe(event);
      expect(raw.typeAt(event.seq)).toBe('turn/end');
    }
    for (const event of kept) expect(raw.at(event.seq)).toBe(event);
  });

  it('keeps a chunk event it cannot rebuild exactly as it was: extra keys, flags, odd members', () => {
    const raw = new SessionLog();
    const odd: AnySessionEvent[] = [
      // Data with a member the loop never writes.
      { type: 'assistant/chunk', seq: 0, time: 1, data: { turn: 1, step: 1, chunk: streamed[3], note: 'x' } },
      // An ignorable chunk event.
      {
        type: 'assistant/chunk',
        seq: 1,
        time: 2,
        data: { turn: 1, step: 1, chunk: streamed[3] },
        ignorable: true,
      },
      // Members in another order.
      { type: 'assistant/chunk', seq: 2, time: 3, data: { step: 1, turn: 1, chunk: streamed[3] } },
      // A turn that is not an integer.
      { type: 'assistant/chunk', seq: 3, time: 4, data: { turn: '1', step: 1, chunk: streamed[3] } },
    ].map((event) => Object.freeze(event) as AnySessionEvent);
    for (const event of odd) raw.push(event);
    packHeldEvents(raw);
    for (const event of odd) expect(raw.at(event.seq)).toBe(event);
  });

  it('rebuilds a delta with an unusual shape as the chunk it was', () => {
    const raw = new SessionLog();
    const chunks = [
      { type: 'text-delta', index: 0, text: 'a', extra: true },
      { type: 'text-delta', text: 'b', index: 0 },
      { type: 'text-delta', index: 0.5, text: 'c' },
      { type: 'future-delta', index: 0, text: 'd' },
      'not an object',
      null,
      // Shapes of the other packed chunks with something off: not frozen, extra members, unknown kinds.
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'usage', usage: Object.freeze({ inputTokens: 1 }), extra: 1 },
      { type: 'finish', reason: Object.freeze({ kind: 'later' }) },
      { type: 'finish', reason: { kind: 'stop' } },
      { type: 'block-start', index: 0, blockType: 'future' },
      { type: 'block-start', index: -1, blockType: 'text' },
      { type: 'block-start', blockType: 'text', index: 0 },
    ];
    const events = chunks.map((chunk, seq) =>
      Object.freeze({
        type: 'assistant/chunk',
        seq,
        time: seq,
        data: Object.freeze({ turn: 1, step: 1, chunk }),
      }),
    );
    for (const event of events) raw.push(event);
    packHeldEvents(raw);
    for (const event of events) {
      expect(raw.at(event.seq)).toStrictEqual(event);
      expect((raw.at(event.seq)!.data as { chunk: unknown }).chunk).toBe(event.data.chunk);
    }
  });

  it('answers reads like an array: negative positions, out of range, slices, across pages', () => {
    const log = session();
    log.append('turn/start', { turn: 1 });
    log.append('step/start', { turn: 1, step: 1 });
    // Enough to grow the first page and fill two more.
    const count = 9_000;
    for (let index = 0; index < count; index++)
      log.append('assistant/chunk', {
        turn: 1,
        step: 1,
        chunk: { type: 'text-delta', index: 0, text: `${index}` },
      });
    const view = log.log;
    expect(view.length).toBe(count + 2);
    expect(view.at(-1)).toStrictEqual(view.at(count + 1));
    expect((view.at(-1)!.data as { chunk: { text: string } }).chunk.text).toBe(`${count - 1}`);
    expect(view.at(count + 2)).toBeUndefined();
    expect(view.at(-(count + 3))).toBeUndefined();
    expect(view.typeAt(count + 2)).toBeUndefined();
    expect(view.slice(-2).map((event) => event.seq)).toEqual([count, count + 1]);
    expect(view.slice(1, 3).map((event) => event.type)).toEqual(['step/start', 'assistant/chunk']);
    expect(view.slice(5, 2)).toEqual([]);
    expect(log.events.map((event) => event.seq)).toEqual([...Array(count + 2).keys()]);
  });

  it('publishes the committed objects in seq order, also for appends made by an observer', () => {
    const hooks = new HookBus();
    const log = session(hooks);
    const published: AnySessionEvent[] = [];
    hooks.on('session/event', ({ event }) => {
      published.push(event);
      if (event.type === 'step/start')
        log.append('assistant/chunk', { turn: 1, step: 1, chunk: streamed[3]! });
    });
    const appended = [
      log.append('turn/start', { turn: 1 }),
      log.append('step/start', { turn: 1, step: 1 }),
      log.append('assistant/chunk', { turn: 1, step: 1, chunk: streamed[5]! }),
    ];
    expect(published.map((event) => event.seq)).toEqual([0, 1, 2, 3]);
    expect(published[0]).toBe(appended[0]);
    expect(published[3]).toBe(appended[2]);
    expect(log.events).toStrictEqual(published);
  });

  const roots: string[] = [];
  afterEach(async () => {
    for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
  });

  it('writes packed chunk events to disk byte for byte, and a reopened log reads them back equal', async () => {
    const root = await mkdtemp(join(tmpdir(), 'rein-log-'));
    roots.push(root);
    const store = new DiskSessionStore({ root, durability: 'process-crash' });
    const live = await store.create({ id: 'packed' });
    const appended = streamTurns(live, streamed);
    await store.release(live);
    const stored = await store.read('packed');
    expect(stored.events).toStrictEqual(appended);
    const reopened = await store.open('packed');
    // The reopened session adds its end-seed marker after the stored events.
    expect(reopened.events.slice(0, appended.length)).toStrictEqual(appended);
    expect(reopened.log.typeAt(appended.length)).toBe('session/end-seed');
    await store.release(reopened);
  });
});

describe('session log: packed messages and inbox splices', () => {
  it('reads back a real agent run equal to what was published, rebuilding messages and splices', async () => {
    const published: AnySessionEvent[] = [];
    const { harness, agent } = await fixture(
      [
        { reasoning: ['a', 'b'], text: ['Hel', 'lo'], usage: { inputTokens: 2, outputTokens: 3 } },
        { toolCalls: [{ name: 'read_file', arguments: { path: 'x' } }] },
        { text: 'read it' },
        { text: 'steered' },
      ],
      { tools: [readFileTool()] },
    );
    harness.hooks.on('session/event', ({ event }) => {
      published.push(event);
    });
    agent.followup('one');
    await agent.whenIdle();
    agent.followup('two');
    agent.followup('three');
    agent.steer('four');
    await agent.whenIdle();
    const log = agent.session.log;
    packHeldEvents(log as SessionLog);
    expect(log.length).toBe(published.length);
    const rebuiltTypes = new Set<string>();
    for (const event of published) {
      const read = log.at(event.seq)!;
      expect(read).toStrictEqual(event);
      expect(JSON.stringify(read)).toBe(JSON.stringify(event));
      expect(deepFrozen(read)).toBe(true);
      expect(log.typeAt(event.seq)).toBe(event.type);
      expect(log.dataAt(event.seq)).toStrictEqual(event.data);
      if (read !== event) rebuiltTypes.add(event.type);
      // A rebuilt message event shares the committed message itself, and a block end the message's block.
      if (event.type === 'user/message') expect(read.data).toBe(event.data);
      if (event.type === 'assistant/message') {
        const message = (event.data as { message: { content: unknown[] } }).message;
        expect((read.data as { message: unknown }).message).toBe(message);
        for (const seq of event.sourceEventSeqs!) {
          const chunk = (log.at(seq)!.data as { chunk: { type: string; block?: unknown } }).chunk;
          if (chunk.type === 'block-end') expect(message.content).toContain(chunk.block);
        }
      }
    }
    for (const type of ['user/message', 'assistant/message', 'agent/inbox/spliced'])
      expect(rebuiltTypes).toContain(type);
    await harness.dispose();
  });

  it('keeps message and splice events it cannot rebuild exactly as they were', () => {
    const raw = new SessionLog();
    const frozen = (event: Record<string, unknown>): AnySessionEvent =>
      Object.freeze(event) as unknown as AnySessionEvent;
    const message = Object.freeze({ id: 'm', role: 'user', content: Object.freeze([]) });
    const chunk = Object.freeze({ turn: 1, step: 1, chunk: streamed[3] });
    const event = (type: string, data: unknown, extra: Record<string, unknown> = {}): AnySessionEvent =>
      frozen({ type, seq: raw.length, time: 1_796_000_000_000, data, ...extra });
    const packable: AnySessionEvent[] = [];
    const kept: AnySessionEvent[] = [];
    const chunks: AnySessionEvent[] = [];
    const push = (into: AnySessionEvent[], made: AnySessionEvent): void => {
      raw.push(made);
      into.push(made);
    };
    const splice = (data: Record<string, unknown>): Record<string, unknown> => Object.freeze(data);
    push(
      packable,
      event(
        'agent/inbox/spliced',
        splice({ target: 'next-turn', start: 0, inserted: Object.freeze([message]) }),
      ),
    );
    push(
      packable,
      event(
        'agent/inbox/spliced',
        splice({ target: 'next-step', start: 0, inserted: Object.freeze([]), removedCount: 2 }),
      ),
    );
    push(packable, event('user/message', message, { surfaceOp: 'append' }));
    // Sources that are exactly the chunks just before, and none at all after a non-chunk event.
    push(chunks, event('assistant/chunk', chunk));
    push(chunks, event('assistant/chunk', chunk));
    const sources = Object.freeze([raw.length - 2, raw.length - 1]);
    push(packable, event('assistant/message', message, { surfaceOp: 'append', sourceEventSeqs: sources }));
    push(
      packable,
      event('assistant/message', message, { surfaceOp: 'append', sourceEventSeqs: Object.freeze([]) }),
    );
    // Replies whose turn, step and usage come from the chunks before them, and ones that differ.
    const usage = Object.freeze({ inputTokens: 4, outputTokens: 5 });
    const usageChunk = Object.freeze({ turn: 1, step: 1, chunk: Object.freeze({ type: 'usage', usage }) });
    const reply = (data: Record<string, unknown>, withUsage: boolean): void => {
      const start = raw.length;
      push(chunks, event('assistant/chunk', chunk));
      if (withUsage) push(chunks, event('assistant/chunk', usageChunk));
      const seqs = Object.freeze([...Array(raw.length - start).keys()].map((offset) => start + offset));
      push(
        packable,
        event('assistant/message', Object.freeze(data), { surfaceOp: 'append', sourceEventSeqs: seqs }),
      );
    };
    reply({ turn: 1, step: 1, message }, false);
    reply({ turn: 1, step: 1, message, usage: Object.freeze({ ...usage }) }, true);
    reply({ turn: 1, step: 1, message, usage: Object.freeze({ outputTokens: 5, inputTokens: 4 }) }, true);
    reply({ turn: 1, step: 1, message, usage: Object.freeze({ inputTokens: 4, outputTokens: 6 }) }, true);
    reply({ turn: 1, step: 1, message, usage }, false);
    reply({ turn: 1, step: 1, message }, true);
    reply({ turn: 2, step: 1, message }, false);
    reply({ turn: 1, step: 1, message, interrupted: true, usage }, true);
    for (const data of [
      // Not at the front, two messages, an unfrozen list, an unknown target, nothing removed, extra members.
      { target: 'next-turn', start: 1, inserted: Object.freeze([message]) },
      { target: 'next-turn', start: 0, inserted: Object.freeze([message, message]) },
      { target: 'next-turn', start: 0, inserted: [message] },
      { target: 'later', start: 0, inserted: Object.freeze([message]) },
      { target: 'next-step', start: 0, inserted: Object.freeze([]), removedCount: 0 },
      { target: 'next-step', start: 0, inserted: Object.freeze([]), removedCount: 1, outcome: 'canceled' },
      { target: 'next-step', start: 0, inserted: Object.freeze([message]), removedCount: 1 },
    ])
      push(kept, event('agent/inbox/spliced', splice(data)));
    push(kept, event('user/message', message, { surfaceOp: 'replace' }));
    push(kept, event('user/message', message));
    push(kept, event('user/message', { ...message }, { surfaceOp: 'append' }));
    push(chunks, event('assistant/chunk', chunk));
    push(chunks, event('assistant/chunk', chunk));
    // Sources with a gap, a seq too many, one too few, in another order, an unfrozen list.
    const last = raw.length - 1;
    for (const seqs of [[last - 1], [last - 2, last - 1, last], [last, last - 1], [last - 1, last + 1]])
      push(
        kept,
        event('assistant/message', message, { surfaceOp: 'append', sourceEventSeqs: Object.freeze(seqs) }),
      );
    push(kept, event('assistant/message', message, { surfaceOp: 'append', sourceEventSeqs: [] }));
    packHeldEvents(raw);
    for (const made of packable) {
      expect(raw.at(made.seq)).toStrictEqual(made);
      expect(raw.at(made.seq)).not.toBe(made);
      expect(deepFrozen(raw.at(made.seq))).toBe(true);
      expect(raw.typeAt(made.seq)).toBe(made.type);
      expect(raw.dataAt(made.seq)).toStrictEqual(made.data);
    }
    for (const made of kept) {
      expect(raw.at(made.seq)).toBe(made);
      expect(raw.dataAt(made.seq)).toBe(made.data);
    }
    expect(raw.dataAt(raw.length)).toBeUndefined();
    for (const made of chunks) expect(raw.at(made.seq)).toStrictEqual(made);
  });
});

describe('session log: packing a page at a time', () => {
  /** Every way a log can be read, for one seq. */
  function reads(log: SessionLog, seq: number): unknown {
    return { event: log.at(seq), type: log.typeAt(seq), data: log.dataAt(seq) };
  }

  it('holds the first page of 4,096 events as committed until it is full, then packs it, and later events at once', () => {
    const log = session();
    const appended: AnySessionEvent[] = [
      log.append('turn/start', { turn: 1 }),
      log.append('step/start', { turn: 1, step: 1 }),
    ];
    while (log.length < 4096)
      appended.push(
        log.append('assistant/chunk', {
          turn: 1,
          step: 1,
          chunk: { type: 'text-delta', index: 0, text: `${log.length}` },
        }),
      );
    // The first page is full but not packed: nothing has started the next one.
    for (const event of appended) expect(log.log.at(event.seq)).toBe(event);
    appended.push(log.append('step/end', { turn: 1, step: 1 }));
    for (const event of appended.slice(0, 4096)) {
      const read = log.log.at(event.seq);
      expect(read).not.toBe(event);
      expect(read).toStrictEqual(event);
      expect(deepFrozen(read)).toBe(true);
    }
    // Past the first page every event is packed as it comes.
    appended.push(
      log.append('step/start', { turn: 1, step: 2 }),
      log.append('assistant/chunk', { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'x' } }),
    );
    for (const event of appended.slice(4096)) {
      expect(log.log.at(event.seq)).not.toBe(event);
      expect(log.log.at(event.seq)).toStrictEqual(event);
    }
  });

  it('packs the same whenever it packs: per event, per page, once at the end, or at random points', async () => {
    // A real run whose long answer's chunks run across the first page's end, its message in the second.
    const deltas = Array.from({ length: 4200 }, (_, index) => `d${index} `);
    const { harness, agent } = await fixture(
      [
        { reasoning: ['a', 'b'], text: ['Hel', 'lo'], usage: { inputTokens: 2, outputTokens: 3 } },
        { toolCalls: [{ name: 'read_file', arguments: { path: 'x' } }] },
        { text: deltas, usage: { inputTokens: 5, outputTokens: 4200 } },
        { text: 'steered' },
      ],
      { tools: [readFileTool()] },
    );
    const eager = new SessionLog();
    const atEnd = new SessionLog();
    const random = new SessionLog();
    const committed: AnySessionEvent[] = [];
    let state = 7;
    harness.hooks.on('session/event', ({ event }) => {
      committed.push(event);
      eager.push(event);
      packHeldEvents(eager);
      atEnd.push(event);
      random.push(event);
      // A fixed pseudo-random sequence: the test is the same on every run.
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      if (state % 97 === 0) packHeldEvents(random);
    });
    agent.followup('one');
    await agent.whenIdle();
    agent.followup('two');
    agent.steer('three');
    await agent.whenIdle();
    const own = agent.session.log as SessionLog;
    expect(own.length).toBe(committed.length);
    expect(own.length).toBeGreaterThan(4096);
    // The session's own log packed its first page when the second began, and the rest as it came.
    const rebuiltOf = (log: SessionLog): boolean[] => committed.map((event) => log.at(event.seq) !== event);
    const eagerRebuilt = rebuiltOf(eager);
    expect(rebuiltOf(own)).toEqual(eagerRebuilt);
    for (const log of [atEnd, random]) packHeldEvents(log);
    // The same events are packed (read back rebuilt) and the same kept as the very object, in every log.
    for (const log of [atEnd, random]) expect(rebuiltOf(log)).toEqual(eagerRebuilt);
    expect(eagerRebuilt.filter(Boolean).length).toBeGreaterThan(4200);
    for (const event of committed) {
      const expected = reads(eager, event.seq);
      for (const log of [own, atEnd, random]) expect(reads(log, event.seq)).toStrictEqual(expected);
      expect((expected as { event: unknown }).event).toStrictEqual(event);
    }
    // The long answer's message was packed as a reply whose sources start in the first page.
    const answer = committed.find(
      (event) => event.type === 'assistant/message' && event.sourceEventSeqs!.length > 4000,
    )!;
    expect(answer.sourceEventSeqs![0]).toBeLessThan(4096);
    expect(answer.seq).toBeGreaterThan(4096);
    expect(eager.at(answer.seq)).not.toBe(answer);
    await harness.dispose();
  });
});
