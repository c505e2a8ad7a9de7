import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent, Session } from '../../src/index.ts';
import { createAssistantMessage, createToolResultMessage, createUserMessage } from '../../src/index.ts';
import { DiskSessionStore, SessionCorruptError } from '../../src/session/stores/index.ts';

const fixture = join(import.meta.dirname, '..', 'fixtures', 'session', 'format-0.jsonl');
const source = { kind: 'model' as const, provider: 'scripted', model: 'test-model' };

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'rein-compact-log-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function json(events: readonly AnySessionEvent[]): string[] {
  return events.map((event) => JSON.stringify(event));
}

/** Appends a step whose chunks, reply, calls and results take every shape the loop commits, and odd ones. */
function appendVariedTurn(session: Session): void {
  const turn = session.lastTurn + 1;
  session.append('turn/start', { turn });
  session.append('step/start', { turn, step: 1 });
  session.append('user/message', createUserMessage('go'), { surfaceOp: 'append' });
  const chunk = (value: Record<string, unknown>, step = 1): void => {
    session.append('assistant/chunk', { turn, step, chunk: value as never });
  };
  const runStart = session.length;
  chunk({ type: 'block-start', index: 0, blockType: 'reasoning' });
  chunk({ type: 'reasoning-delta', index: 0, text: 'think ' });
  chunk({ type: 'reasoning-delta', index: 0, text: 'hard' });
  chunk({ type: 'block-end', index: 0, block: { type: 'reasoning', text: 'think hard' } });
  chunk({ type: 'block-start', index: 1, blockType: 'text' });
  chunk({ type: 'text-delta', index: 1, text: 'Hé "x"\n' });
  // A delta of another index inside the run, and a block end that is not what the deltas built.
  chunk({ type: 'text-delta', index: 3, text: 'elsewhere' });
  chunk({ type: 'text-delta', index: 1, text: 'more' });
  chunk({ type: 'block-end', index: 1, block: { type: 'text', text: 'Hé "x"\nmore', extra: true } });
  chunk({ type: 'block-start', index: 2, blockType: 'tool-call' });
  chunk({ type: 'tool-call-delta', index: 2, id: 'c1', name: 'read_file', argumentsDelta: '{"pa' });
  chunk({ type: 'tool-call-delta', index: 2, argumentsDelta: 'th":"a"}' });
  chunk({
    type: 'block-end',
    index: 2,
    block: { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
  });
  chunk({ type: 'usage', usage: { inputTokens: 10, outputTokens: 2 } });
  chunk({ type: 'finish', reason: { kind: 'tool-calls' } });
  chunk({ type: 'finish', reason: { kind: 'error', message: 'odd second finish' } });
  const sources = Array.from({ length: session.length - runStart }, (_, index) => runStart + index);
  const content = [
    { type: 'reasoning' as const, text: 'think hard' },
    { type: 'text' as const, text: 'Hé "x"\nmore', extra: true },
    { type: 'tool-call' as const, id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
  ];
  session.append(
    'assistant/message',
    {
      turn,
      step: 1,
      message: createAssistantMessage(content as never, source),
      usage: { inputTokens: 10, outputTokens: 2 },
    },
    { surfaceOp: 'append', sourceEventSeqs: sources },
  );
  const call = session.append('tool/call', {
    turn,
    step: 1,
    callId: 'c1',
    name: 'read_file',
    arguments: '{"path":"a"}',
  });
  session.append(
    'tool/result',
    {
      turn,
      step: 1,
      message: createToolResultMessage('c1', [{ type: 'text', text: 'no such file' }], true),
      error: { name: 'Error', code: 'ENOENT' },
    },
    { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
  );
  session.append('plugin/note' as never, { note: 'kept' } as never, { ignorable: true });
  session.append('step/end', { turn, step: 1 });
  // A second step whose reply's sources are not its chunk run, and a call the reply does not hold.
  session.append('step/start', { turn, step: 2 });
  chunk({ type: 'text-delta', index: 0, text: 'answer' }, 2);
  session.append('assistant/chunk', { turn, step: 2, chunk: { type: 'finish', reason: { kind: 'stop' } } });
  session.append(
    'assistant/message',
    { turn, step: 2, message: createAssistantMessage([{ type: 'text', text: 'answer' }], source) },
    { surfaceOp: 'append', sourceEventSeqs: [session.length - 1] },
  );
  session.append('tool/call', { turn, step: 2, callId: 'c9', name: 'other', arguments: '{}' });
  session.append('step/end', { turn, step: 2 });
  session.append('turn/end', { turn, reason: { kind: 'completed' } });
}

describe('the compact log format (format 1)', () => {
  it('loads every event exactly as committed, across reopen and further appends', async () => {
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'varied', cwd: '/w', createdAt: 1_000 });
    appendVariedTurn(session);
    const committed = json(session.events);
    await store.release(session);
    const text = await readFile(store.pathOf('varied'), 'utf8');
    expect(JSON.parse(text.slice(0, text.indexOf('\n')))).toMatchObject({ type: 'session', version: 1 });
    expect(json((await new DiskSessionStore({ root }).read('varied')).events)).toEqual(committed);

    const reopened = await store.open('varied');
    expect(json(reopened.events).slice(0, committed.length)).toEqual(committed);
    appendVariedTurn(reopened);
    const all = json(reopened.events);
    await store.release(reopened);
    expect(json((await new DiskSessionStore({ root }).read('varied')).events)).toEqual(all);
    // Exported as full envelopes, imported back as the same compact bytes.
    const exported = await store.exportLog('varied');
    expect(exported.split('\n').slice(1, -1)).toEqual(all);
    const copy = new DiskSessionStore({ root: join(root, 'copy') });
    await copy.importLog(exported);
    expect(await readFile(copy.pathOf('varied'), 'utf8')).toBe(
      await readFile(store.pathOf('varied'), 'utf8'),
    );
  });

  it('keeps odd times exactly (fractions, clocks that go back) and a seeded log as given', async () => {
    const seed: AnySessionEvent[] = [
      { type: 'turn/start', seq: 0, time: 5.25, data: { turn: 1 } },
      { type: 'step/start', seq: 1, time: 0.1 + 0.2, data: { turn: 1, step: 1 } },
      { type: 'step/end', seq: 2, time: -3, data: { turn: 1, step: 1 } },
      { type: 'turn/end', seq: 3, time: 2 ** 53 - 1, data: { turn: 1, reason: { kind: 'completed' } } },
    ] as AnySessionEvent[];
    const store = new DiskSessionStore({ root });
    const session = await store.create({ id: 'times', createdAt: 7 }, { seed });
    const committed = json(session.events);
    await store.release(session);
    expect(json((await store.read('times')).events)).toEqual(committed);
  });

  it('refuses a compact record that does not fit what precedes it, with its line and byte offset', async () => {
    const header = '{"type":"session","id":"broken","version":1,"createdAt":1}\n';
    const good = '[8,1,0]\n[6,0,1]\n[7,0,0]\n';
    for (const bad of [
      '[7,0,0]',
      '[99,0,0]',
      '[1,0,"delta outside a block"]',
      '["x/y","soon",{}]',
      '[6,0]',
    ]) {
      await writeFile(join(root, 'broken.jsonl'), `${header}${good}${bad}\n[9,0,{"kind":"completed"}]\n`);
      const error = await new DiskSessionStore({ root }).read('broken').then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, bad).toBeInstanceOf(SessionCorruptError);
      expect(error, bad).toMatchObject({ line: 5, offset: header.length + good.length, goodEvents: 3 });
    }
  });
});

describe('logs written before the compact format (format 0)', () => {
  it('open, repair their crashed turn and go on in their own format; the fixture bytes stay as they were', async () => {
    const original = await readFile(fixture, 'utf8');
    await mkdir(root, { recursive: true });
    await copyFile(fixture, join(root, 'format-0.jsonl'));
    const store = new DiskSessionStore({ root });
    const stored = await store.read('format-0');
    expect(json(stored.events)).toEqual(original.split('\n').slice(1, -1));
    expect(stored.events.at(-1)).toMatchObject({ type: 'tool/call', data: { callId: 'call_9' } });

    const session = await store.open('format-0');
    expect(session.events.slice(stored.events.length).map((event) => event.type)).toEqual([
      'tool/result',
      'step/end',
      'turn/end',
      'session/end-seed',
    ]);
    expect(session.events[stored.events.length]).toMatchObject({
      data: { error: { code: 'TOOL_OUTCOME_UNKNOWN' } },
    });
    session.append('user/message', createUserMessage('after the upgrade'), { surfaceOp: 'append' });
    const all = json(session.events);
    await store.release(session);
    const text = await readFile(join(root, 'format-0.jsonl'), 'utf8');
    expect(text.startsWith(original)).toBe(true);
    // Still format 0 throughout: one full envelope per line, readable by the Rein that wrote it.
    expect(text.split('\n').slice(1, -1)).toEqual(all);
    expect(await store.exportLog('format-0')).toBe(text);
    expect(json((await new DiskSessionStore({ root }).read('format-0')).events)).toEqual(all);
  });

  it('import into the compact format and export back byte for byte', async () => {
    const original = await readFile(fixture, 'utf8');
    const store = new DiskSessionStore({ root });
    await store.importLog(original, 'the fixture');
    const compact = await readFile(store.pathOf('format-0'), 'utf8');
    expect(compact.length).toBeLessThan(original.length * 0.75);
    expect(await store.exportLog('format-0')).toBe(original);
  });
});
