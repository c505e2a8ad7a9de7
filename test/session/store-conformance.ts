import { describe, expect, it } from 'vitest';
import type { PricingLookup, SessionStore } from '../../src/internal.ts';
import { HookBus } from '../../src/internal.ts';
import { eventTypes } from '../../src/testing/index.ts';
import { appendOpenToolTurn, appendTextTurn } from '../support/session-turns.ts';

/** Makes a fresh, empty store for one test; `cleanup` runs after it. */
export type StoreFactory = (options: { pricing?: PricingLookup }) => Promise<{
  store: SessionStore;
  cleanup: () => Promise<void>;
}>;

function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (error as { code?: string }).code,
  );
}

/** The store conformance suite: every SessionStore must pass it unchanged. */
export function describeStoreConformance(name: string, factory: StoreFactory): void {
  describe(`SessionStore conformance: ${name}`, () => {
    async function withStore<T>(
      run: (store: SessionStore) => Promise<T>,
      options: { pricing?: PricingLookup } = {},
    ): Promise<T> {
      const { store, cleanup } = await factory(options);
      try {
        return await run(store);
      } finally {
        await cleanup();
      }
    }

    it('creates, appends, releases and reads back the same header and events', async () => {
      await withStore(async (store) => {
        const session = await store.create({ id: 's1', cwd: '/work/project', createdAt: 1000 });
        expect(session.header).toMatchObject({ version: 0, id: 's1', cwd: '/work/project', createdAt: 1000 });
        appendTextTurn(session, 'Hello there', 'Hi!');
        const written = [...session.events];
        await store.release(session);
        expect(session.closed).toBe(true);
        const stored = await store.read('s1');
        expect(stored.header).toEqual({ version: 0, id: 's1', cwd: '/work/project', createdAt: 1000 });
        expect(stored.events).toEqual(written);
      });
    });

    it('publishes appends on the bound hook bus', async () => {
      await withStore(async (store) => {
        const hooks = new HookBus();
        hooks.declare({ 'session/event': 'emit' });
        store.bind?.(hooks);
        const seen: string[] = [];
        hooks.on('session/event', ({ event }) => {
          seen.push(event.type);
        });
        const session = await store.create({ id: 'bound' });
        appendTextTurn(session, 'p', 'a');
        expect(seen).toEqual(eventTypes(session));
        await store.release(session);
      });
    });

    it('refuses a duplicate id, unknown ids and a second writer with stable codes', async () => {
      await withStore(async (store) => {
        const session = await store.create({ id: 'dup' });
        expect(await codeOf(store.create({ id: 'dup' }))).toBe('SESSION_EXISTS');
        expect(await codeOf(store.open('dup'))).toBe('SESSION_LOCKED');
        expect(await codeOf(store.delete('dup'))).toBe('SESSION_LOCKED');
        await store.release(session);
        expect(await codeOf(store.create({ id: 'dup' }))).toBe('SESSION_EXISTS');
        expect(await codeOf(store.open('missing'))).toBe('SESSION_NOT_FOUND');
        expect(await codeOf(store.read('missing'))).toBe('SESSION_NOT_FOUND');
        expect(await codeOf(store.delete('missing'))).toBe('SESSION_NOT_FOUND');
        expect(await codeOf(store.fork('missing'))).toBe('SESSION_NOT_FOUND');
      });
    });

    it('reopens a balanced log unchanged and continues seq after a session/end-seed', async () => {
      await withStore(async (store) => {
        const session = await store.create({ id: 'again' });
        appendTextTurn(session, 'one', 'first');
        const before = [...session.events];
        await store.release(session);
        const reopened = await store.open('again');
        expect(reopened.events.slice(0, before.length)).toEqual(before);
        expect(reopened.events[before.length]).toMatchObject({
          type: 'session/end-seed',
          seq: before.length,
        });
        expect(reopened.lastTurn).toBe(1);
        appendTextTurn(reopened, 'two', 'second');
        expect(reopened.events.map((event) => event.seq)).toEqual(reopened.events.map((_, index) => index));
        await store.release(reopened);
        const stored = await store.read('again');
        expect(stored.events).toEqual([...reopened.events]);
        expect(eventTypes(stored.events).filter((type) => type === 'turn/start')).toHaveLength(2);
      });
    });

    it('repairs an interrupted turn on open by appending closers for every unsettled call', async () => {
      await withStore(async (store) => {
        const session = await store.create({ id: 'crashed' });
        appendTextTurn(session, 'first', 'ok');
        appendOpenToolTurn(session);
        const before = [...session.events];
        const callSeq = before.find((event) => event.type === 'tool/call')!.seq;
        await store.release(session);
        // Reading never repairs.
        expect((await store.read('crashed')).events).toEqual(before);
        const reopened = await store.open('crashed');
        const added = reopened.events.slice(before.length);
        expect(added.map((event) => event.type)).toEqual([
          'tool/result',
          'tool/result',
          'step/end',
          'turn/end',
          'session/end-seed',
        ]);
        expect(added[0]).toMatchObject({
          data: {
            turn: 2,
            step: 1,
            error: { code: 'TOOL_OUTCOME_UNKNOWN' },
            message: { source: { callId: 'call_a' } },
          },
          sourceEventSeqs: [callSeq],
        });
        expect(added[1]).toMatchObject({
          data: { error: { code: 'TOOL_NOT_STARTED' }, message: { source: { callId: 'call_b' } } },
        });
        expect(added[1]!.sourceEventSeqs).toBeUndefined();
        expect(added[3]!.data).toEqual({ turn: 2, reason: { kind: 'interrupted' } });
        expect(reopened.openTurn).toBeUndefined();
        expect(reopened.lastTurn).toBe(2);
        // Every tool call of the derived history is answered: a provider accepts it.
        const history = reopened.deriveMessages();
        const calls = history.flatMap((message) =>
          message.content.filter((block) => block.type === 'tool-call').map((block) => block.id),
        );
        const results = history.flatMap((message) =>
          message.content.filter((block) => block.type === 'tool-result').map((block) => block.toolCallId),
        );
        expect(results).toEqual(calls);
        await store.release(reopened);
        expect((await store.read('crashed')).events).toEqual([...reopened.events]);
      });
    });

    it('lists sessions newest first with title, cwd, turns, token totals and cost', async () => {
      const pricing: PricingLookup = (provider, model) =>
        provider === 'scripted' && model === 'test-model'
          ? { input: 2, cachedInput: 0.5, output: 10 }
          : undefined;
      await withStore(
        async (store) => {
          const older = await store.create({ id: 'older', cwd: '/a', createdAt: 1 });
          appendTextTurn(older, 'Fix the login bug\nsecond line', 'done');
          await store.release(older);
          await new Promise((resolve) => setTimeout(resolve, 5));
          const newer = await store.create({ id: 'newer', createdAt: 2 });
          appendTextTurn(newer, 'Write docs', 'ok');
          appendTextTurn(newer, 'More docs', 'ok');
          const rows = await store.list();
          expect(rows.map((row) => row.id)).toEqual(['newer', 'older']);
          expect(rows[1]).toMatchObject({
            id: 'older',
            title: 'Fix the login bug',
            cwd: '/a',
            createdAt: 1,
            turns: 1,
            events: 6,
            usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 500, cacheWriteTokens: 0 },
          });
          // (1000 × 2 + 500 × 0.5 + 100 × 10) / 1e6 dollars per turn.
          expect(rows[1]!.cost).toBeCloseTo(0.00325, 10);
          expect(rows[0]).toMatchObject({ id: 'newer', title: 'Write docs', turns: 2 });
          expect(rows[0]!.cost).toBeCloseTo(0.0065, 10);
          await store.release(newer);
        },
        { pricing },
      );
    });

    it("reads a log for reading only (readLog): the events of read, with the snapshot's scan states", async () => {
      await withStore(async (store) => {
        // readLog is an optional seam: a store without snapshots (the memory store) leaves it out.
        if (store.readLog === undefined) return;
        const session = await store.create({ id: 'paged' });
        session.scans.register('conformance/turns', () => ({ turns: session.lastTurn }));
        appendTextTurn(session, 'one', 'a');
        appendTextTurn(session, 'two', 'b');
        const written = [...session.events];
        await store.release(session);
        const stored = await store.readLog('paged');
        expect(stored.header).toEqual((await store.read('paged')).header);
        expect(stored.log.length).toBe(written.length);
        expect([...stored.log]).toEqual(written);
        expect(stored.log.at(-1)).toEqual(written.at(-1));
        expect(stored.scans['conformance/turns']).toEqual({ events: written.length, state: { turns: 2 } });
        // A live session is read from its own log, events appended since included.
        const reopened = await store.open('paged');
        appendTextTurn(reopened, 'three', 'c');
        const live = await store.readLog('paged');
        expect([...live.log]).toEqual([...reopened.events]);
        await store.release(reopened);
        expect([...(await store.readLog('paged')).log]).toEqual((await store.read('paged')).events);
        expect(await codeOf(store.readLog('missing'))).toBe('SESSION_NOT_FOUND');
      });
    });

    it('deletes a released session', async () => {
      await withStore(async (store) => {
        const session = await store.create({ id: 'gone' });
        await store.release(session);
        await store.delete('gone');
        expect(await codeOf(store.read('gone'))).toBe('SESSION_NOT_FOUND');
        expect((await store.list()).map((row) => row.id)).toEqual([]);
        const again = await store.create({ id: 'gone' });
        await store.release(again);
      });
    });

    it('forks at a turn boundary: a new session seeded with the prefix, not held', async () => {
      await withStore(async (store) => {
        const session = await store.create({ id: 'parent', cwd: '/p' });
        appendTextTurn(session, 'one', 'a');
        const turnOneEnd = session.length;
        appendTextTurn(session, 'two', 'b');
        await store.release(session);
        const header = await store.fork('parent', { atTurn: 1, id: 'child' });
        expect(header).toMatchObject({
          version: 0,
          id: 'child',
          cwd: '/p',
          parentSession: 'parent',
          seedLength: turnOneEnd,
          origin: 'fork',
        });
        const parent = await store.read('parent');
        const child = await store.read('child');
        expect(child.header).toEqual(header);
        expect(child.events.slice(0, turnOneEnd)).toEqual(parent.events.slice(0, turnOneEnd));
        expect(eventTypes(child.events).slice(turnOneEnd)).toEqual(['session/end-seed']);
        const opened = await store.open('child');
        expect(opened.lastTurn).toBe(1);
        appendTextTurn(opened, 'three', 'c');
        expect(opened.eventsOfType('turn/start').map((event) => event.data.turn)).toEqual([1, 2]);
        await store.release(opened);
        expect(await codeOf(store.fork('parent', { atTurn: 3 }))).toBe('INVALID_FORK');
        expect(await codeOf(store.fork('parent', { atTurn: 0 }))).toBe('INVALID_FORK');
        expect(await codeOf(store.fork('parent', { id: 'child' }))).toBe('SESSION_EXISTS');
      });
    });

    it('forks a live session before its open turn, and a crashed one with its turn closed', async () => {
      await withStore(async (store) => {
        const session = await store.create({ id: 'busy' });
        appendTextTurn(session, 'one', 'a');
        const boundary = session.length;
        appendOpenToolTurn(session);
        const live = await store.fork('busy', { id: 'from-live' });
        expect(live.seedLength).toBe(boundary);
        await store.release(session);
        const stored = await store.fork('busy', { id: 'from-stored' });
        const events = (await store.read('from-stored')).events;
        expect(stored.seedLength).toBe(events.length - 1);
        expect(eventTypes(events).slice(-3)).toEqual(['step/end', 'turn/end', 'session/end-seed']);
        expect(events.at(-2)!.data).toEqual({ turn: 2, reason: { kind: 'interrupted' } });
      });
    });
  });
}
