import { describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import {
  HookBus,
  Session,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  repairInterruptedTail,
  sessionEventModes,
} from '../../src/internal.ts';

function session(hooks?: HookBus): Session {
  return new Session({ header: { version: 0, id: 's1', createdAt: 0 }, ...(hooks ? { hooks } : {}) });
}

const model = { kind: 'model', provider: 'p', model: 'm' } as const;

describe('session log: append contract', () => {
  it('assigns contiguous seq, snapshots and freezes data', () => {
    const log = session();
    const data = { turn: 1 };
    const event = log.append('turn/start', data);
    data.turn = 99;
    expect(event).toMatchObject({ type: 'turn/start', seq: 0, data: { turn: 1 } });
    expect(Object.isFrozen(event.data)).toBe(true);
    expect(() => {
      (event.data as { turn: number }).turn = 2;
    }).toThrow();
    log.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    expect(log.events.map((e) => e.seq)).toEqual([0, 1]);
  });

  it('rejects data that is not lossless JSON, and appends nothing', () => {
    const log = session();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad: unknown[] = [
      { value: Number.NaN },
      { value: -0 },
      { value: undefined },
      { value: 1n },
      { value: new Date() },
      { value: () => 1 },
      cyclic,
      { value: [1, , 3] },
    ];
    for (const data of bad) {
      expect(() => log.append('session/end-seed', data as never)).toThrowError(
        expect.objectContaining({ code: 'INVALID_JSON_DATA' }),
      );
    }
    expect(log.length).toBe(0);
  });

  it('adopt freezes the handed-over root in place, still snapshots its members, and validates', () => {
    const log = session();
    const chunk: { type: 'text-delta'; index: number; text: string } = {
      type: 'text-delta',
      index: 0,
      text: 'hi',
    };
    log.append('turn/start', { turn: 1 }, { adopt: true });
    log.append('step/start', { turn: 1, step: 1 }, { adopt: true });
    const data = { turn: 1, step: 1, chunk };
    const event = log.append('assistant/chunk', data, { adopt: true });
    expect(event.data).toBe(data);
    expect(Object.isFrozen(data)).toBe(true);
    // The nested chunk belongs to someone else (the adapter): it is copied, not frozen in place.
    expect((event.data as { chunk: unknown }).chunk).not.toBe(chunk);
    expect(Object.isFrozen(chunk)).toBe(false);
    chunk.text = 'changed';
    expect(event.data).toEqual({ turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'hi' } });
    // A frozen root cannot be adopted: it is copied like any other.
    const frozen = Object.freeze({ turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } });
    expect(log.append('assistant/chunk', frozen as never, { adopt: true }).data).not.toBe(frozen);
    // Validation is the same: a bad member is refused with its path and nothing is appended.
    const length = log.length;
    expect(() =>
      log.append('assistant/chunk', { turn: 1, step: 1, chunk: { text: Number.NaN } } as never, {
        adopt: true,
      }),
    ).toThrowError(
      expect.objectContaining({
        code: 'INVALID_JSON_DATA',
        message: expect.stringContaining('assistant/chunk.data.chunk.text'),
      }),
    );
    expect(() => log.append('step/end', { turn: 1, step: undefined } as never, { adopt: true })).toThrowError(
      expect.objectContaining({
        code: 'INVALID_JSON_DATA',
        message: expect.stringContaining('step/end.data.step'),
      }),
    );
    expect(log.length).toBe(length);
    // The walk's shared state is unwound after a rejection: the next snapshot names its own path.
    expect(() => log.append('step/end', { turn: 1, step: 1, extra: [1, , 2] } as never)).toThrowError(
      expect.objectContaining({ message: expect.stringContaining('step/end.data.extra[1]') }),
    );
  });

  it('enforces enclosure: turns 1,2,3 never nest, steps from 1, chunks inside the open step', () => {
    const log = session();
    expect(() => log.append('turn/start', { turn: 2 })).toThrowError(
      expect.objectContaining({ code: 'ENCLOSURE_VIOLATION' }),
    );
    log.append('turn/start', { turn: 1 });
    expect(() => log.append('turn/start', { turn: 2 })).toThrowError(/still open/);
    expect(() => log.append('step/start', { turn: 1, step: 2 })).toThrowError(/expected step 1/);
    expect(() =>
      log.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'x' } }),
    ).toThrowError(/open step/);
    log.append('step/start', { turn: 1, step: 1 });
    expect(() => log.append('turn/end', { turn: 1, reason: { kind: 'completed' } })).toThrowError(
      /step 1 is still open/,
    );
    expect(() =>
      log.append(
        'tool/result',
        { turn: 1, step: 1, message: createToolResultMessage('c1', [{ type: 'text', text: 'x' }], false) },
        { surfaceOp: 'append' },
      ),
    ).toThrowError(/no pending tool\/call c1/);
    log.append('tool/call', { turn: 1, step: 1, callId: 'c1', name: 't', arguments: '{}' });
    expect(() =>
      log.append('tool/call', { turn: 1, step: 1, callId: 'c1', name: 't', arguments: '{}' }),
    ).toThrowError(/already logged/);
    log.append(
      'tool/result',
      { turn: 1, step: 1, message: createToolResultMessage('c1', [{ type: 'text', text: 'x' }], false) },
      { surfaceOp: 'append', sourceEventSeqs: [2] },
    );
    expect(() =>
      log.append(
        'tool/result',
        { turn: 1, step: 1, message: createToolResultMessage('c1', [{ type: 'text', text: 'y' }], false) },
        { surfaceOp: 'append' },
      ),
    ).toThrowError(/no pending/);
    log.append('step/end', { turn: 1, step: 1 });
    log.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
    log.append('turn/start', { turn: 2 });
    expect(log.lastTurn).toBe(2);
  });

  it('surface metadata is allowed only on surface events, and mandatory there', () => {
    const log = session();
    expect(() => log.append('turn/start', { turn: 1 }, { surfaceOp: 'append' })).toThrowError(
      expect.objectContaining({ code: 'SURFACE_VIOLATION' }),
    );
    expect(() => log.append('user/message', createUserMessage('hi'))).toThrowError(/need a surfaceOp/);
    expect(() =>
      log.append('user/message', createUserMessage('hi'), { surfaceOp: 'append', sourceEventSeqs: [0] }),
    ).toThrowError(/not earlier/);
  });

  it('sourceEventSeqs may come in any order but never repeat', () => {
    const log = session();
    log.append('turn/start', { turn: 1 });
    log.append('step/start', { turn: 1, step: 1 });
    for (const text of ['a', 'b', 'c'])
      log.append('assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text } });
    const message = {
      turn: 1,
      step: 1,
      message: createAssistantMessage([{ type: 'text', text: 'abc' }], model),
    };
    for (const sources of [
      [2, 3, 2],
      [3, 2, 3],
      [2, 2],
      [4, 3, 2, 4],
    ]) {
      expect(() =>
        log.append('assistant/message', message, { surfaceOp: 'append', sourceEventSeqs: sources }),
      ).toThrowError(/duplicate source/);
    }
    expect(log.length).toBe(5);
    log.append('assistant/message', message, { surfaceOp: 'append', sourceEventSeqs: [4, 2, 3] });
    log.append('assistant/message', message, { surfaceOp: 'append', sourceEventSeqs: [2, 3, 4] });
    expect(log.length).toBe(7);
  });
});

describe('the surface and derived history', () => {
  it('derives messages in surface order; empty assistant anchors contribute nothing', () => {
    const log = session();
    const first = createUserMessage('one');
    log.append('user/message', first, { surfaceOp: 'append' });
    log.append('turn/start', { turn: 1 });
    log.append('step/start', { turn: 1, step: 1 });
    const empty = createAssistantMessage([], model);
    log.append(
      'assistant/message',
      { turn: 1, step: 1, message: empty },
      { surfaceOp: 'append', sourceEventSeqs: [] },
    );
    const reply = createAssistantMessage([{ type: 'text', text: 'two' }], model);
    log.append('assistant/message', { turn: 1, step: 1, message: reply }, { surfaceOp: 'append' });
    expect(log.deriveMessages()).toEqual([first, reply]);
    expect(log.deriveMessages()).not.toBe(log.deriveMessages());
    expect(log.deriveMessages()[0]).toBe(first);
  });

  it('extends incrementally and rebuilds when a replacement advances the generation', () => {
    const log = session();
    const messages = ['a', 'b', 'c'].map((text) => createUserMessage(text));
    for (const message of messages) log.append('user/message', message, { surfaceOp: 'append' });
    const before = log.derivedMessages();
    expect(log.derivedMessages()).toBe(before);
    expect(log.replaceGeneration).toBe(0);
    const summary = createUserMessage('summary of a and b', { kind: 'plugin', plugin: 'compaction' });
    expect(() =>
      log.append('user/message', summary, {
        surfaceOp: { op: 'replace', start: 0, end: 1 },
        sourceEventSeqs: [0],
      }),
    ).toThrowError(/every shadowed node/);
    expect(() =>
      log.append('user/message', summary, {
        surfaceOp: { op: 'replace', start: 1, end: 0 },
        sourceEventSeqs: [0, 1],
      }),
    ).toThrowError(/comes after/);
    log.append('user/message', summary, {
      surfaceOp: { op: 'replace', start: 0, end: 1 },
      sourceEventSeqs: [0, 1],
    });
    expect(log.replaceGeneration).toBe(1);
    expect(log.surfaceNodes).toEqual([3, 2]);
    expect(log.deriveMessages().map((message) => message.id)).toEqual([summary.id, messages[2]!.id]);
    // The original range stays in the log.
    expect(log.events).toHaveLength(4);
  });

  it('a replacing tool/result may differ from the shadowed one only in its content', () => {
    const log = session();
    log.append('turn/start', { turn: 1 });
    log.append('step/start', { turn: 1, step: 1 });
    log.append('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'read', arguments: '{}' });
    const original = createToolResultMessage('c1', [{ type: 'text', text: 'x'.repeat(100) }], false);
    log.append(
      'tool/result',
      { turn: 1, step: 1, message: original },
      { surfaceOp: 'append', sourceEventSeqs: [2] },
    );
    log.append('step/end', { turn: 1, step: 1 });
    const pruned = createToolResultMessage('c1', [{ type: 'text', text: 'x…' }], false, original.id);
    const other = createToolResultMessage('c1', [{ type: 'text', text: 'x…' }], true, original.id);
    expect(() =>
      log.append(
        'tool/result',
        { turn: 1, step: 1, message: other },
        { surfaceOp: { op: 'replace', start: 3, end: 3 }, sourceEventSeqs: [3] },
      ),
    ).toThrowError(/differ only/);
    log.append(
      'tool/result',
      { turn: 1, step: 1, message: pruned },
      { surfaceOp: { op: 'replace', start: 3, end: 3 }, sourceEventSeqs: [3] },
    );
    expect(log.deriveMessages()).toEqual([pruned]);
  });
});

describe('observers and re-entrant appends (section 0 item 6)', () => {
  it('an append made inside a session/event observer commits and every observer sees seq order', () => {
    const hooks = new HookBus();
    hooks.declare(sessionEventModes);
    const log = session(hooks);
    const first: number[] = [];
    const second: number[] = [];
    hooks.on('session/event', ({ event }) => {
      first.push(event.seq);
      if (event.type === 'turn/start')
        log.append('user/message', createUserMessage('from observer'), { surfaceOp: 'append' });
    });
    hooks.on('session/event', ({ event }) => {
      second.push(event.seq);
    });
    log.append('turn/start', { turn: 1 });
    expect(log.events.map((event) => event.type)).toEqual(['turn/start', 'user/message']);
    expect(first).toEqual([0, 1]);
    expect(second).toEqual([0, 1]);
  });

  it('a throwing observer is contained; the append has committed', () => {
    const reported: unknown[] = [];
    const hooks = new HookBus({ reportError: (_event, error) => reported.push(error) });
    hooks.declare(sessionEventModes);
    const log = session(hooks);
    hooks.on('session/event', () => {
      throw new Error('observer broke');
    });
    expect(() => log.append('turn/start', { turn: 1 })).not.toThrow();
    expect(log.length).toBe(1);
    expect(reported).toHaveLength(1);
  });
});

describe('seeds and crash repair', () => {
  it('a seed is validated like appends and followed by session/end-seed', () => {
    const seed: AnySessionEvent[] = [
      { type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } },
      { type: 'turn/end', seq: 1, time: 2, data: { turn: 1, reason: { kind: 'completed' } } },
    ];
    const log = new Session({ header: { version: 0, id: 's', createdAt: 0 }, seed });
    expect(log.events.map((event) => event.type)).toEqual(['turn/start', 'turn/end', 'session/end-seed']);
    expect(log.firstLiveSeq).toBe(2);
    expect(
      () =>
        new Session({
          header: { version: 0, id: 's', createdAt: 0 },
          seed: [{ type: 'turn/end', seq: 0, time: 1, data: { turn: 1, reason: { kind: 'completed' } } }],
        }),
    ).toThrowError(expect.objectContaining({ code: 'ENCLOSURE_VIOLATION' }));
  });

  it('repairs an open turn: outcome-unknown and not-started results, step/end, turn/end interrupted', () => {
    const log = session();
    log.append('turn/start', { turn: 1 });
    log.append('step/start', { turn: 1, step: 1 });
    const message = createAssistantMessage(
      [
        { type: 'tool-call', id: 'a', name: 't', arguments: '{}' },
        { type: 'tool-call', id: 'b', name: 't', arguments: '{}' },
      ],
      model,
    );
    log.append('assistant/message', { turn: 1, step: 1, message }, { surfaceOp: 'append' });
    log.append('tool/call', { turn: 1, step: 1, callId: 'a', name: 't', arguments: '{}' });
    const repaired = repairInterruptedTail(log.events);
    const tail = repaired.slice(log.length);
    expect(tail.map((event) => event.type)).toEqual(['tool/result', 'tool/result', 'step/end', 'turn/end']);
    expect(tail.map((event) => (event.data as { error?: { code: string } }).error?.code)).toEqual([
      'TOOL_OUTCOME_UNKNOWN',
      'TOOL_NOT_STARTED',
      undefined,
      undefined,
    ]);
    expect(tail[3]!.data).toEqual({ turn: 1, reason: { kind: 'interrupted' } });
    const resumed = new Session({ header: { version: 0, id: 's1', createdAt: 0 }, seed: repaired });
    expect(resumed.openTurn).toBeUndefined();
    const events = resumed.events;
    expect(repairInterruptedTail(events)).toBe(events);
  });
});
