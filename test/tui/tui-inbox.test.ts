import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TuiFixture } from './tui-fixture.ts';
import { quit, tuiFixture } from './tui-fixture.ts';
import { keys, pty } from './tui-terminal.ts';

let fixture: TuiFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** A slow streamed text: `count` words, one per event, `delayMs` apart. */
function slowText(word: string, count: number): string[] {
  return Array.from({ length: count }, () => `${word} `);
}

interface WireMessage {
  role: string;
  content: unknown;
}

function messagesOf(body: unknown): WireMessage[] {
  return (body as { messages: WireMessage[] }).messages;
}

describe.skipIf(pty === undefined)('the inbox in the TUI', () => {
  it('Esc during an approval ends the turn aborted (cause user) and keeps the queue; send now runs it', async () => {
    fixture = await tuiFixture([
      {
        text: slowText('thinking', 40),
        delayMs: 40,
        toolCalls: [
          {
            id: 'call_w1',
            name: 'write_file',
            arguments: JSON.stringify({ path: 'out.txt', content: 'new\n' }),
          },
        ],
      },
      { text: 'Queued one done.' },
    ]);
    const tui = fixture.start();
    await tui.waitFor('Type a prompt');
    tui.type('write the file');
    tui.type(keys.enter);
    await tui.waitFor('thinking thinking');
    tui.type('queued prompt');
    tui.type(keys.altEnter);
    await tui.waitFor('[next turn] queued prompt');
    const asking = await tui.waitFor('Allow write_file?');
    expect(asking).toContain('+new');
    expect(asking).toContain('queued (1)');
    tui.type(keys.escape);
    const stopped = await tui.waitFor('turn 1 · aborted');
    expect(stopped).toContain('[next turn] queued prompt');
    expect(stopped).toContain('Stopped by you');
    expect(existsSync(join(fixture.box.workspace, 'out.txt'))).toBe(false);
    const [id] = fixture.sessionIds();
    tui.type(keys.shiftTab);
    await tui.waitFor('Enter send now');
    tui.type(keys.enter);
    const second = await tui.waitFor('turn 2 · completed');
    expect(second).toContain('Queued one done.');
    expect(second).not.toContain('[next turn] queued prompt');
    await quit(tui);
    const events = await fixture.events(id!);
    const cancelled = events.find((event) => event.type === 'agent/cancelled');
    expect(cancelled?.data).toEqual({ cause: { kind: 'user' } });
    const ends = events.filter((event) => event.type === 'turn/end').map((event) => event.data);
    expect(ends).toEqual([
      { turn: 1, reason: { kind: 'aborted' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    // Every tool call has exactly one result, the aborted one included.
    expect(events.filter((event) => event.type === 'tool/result')).toHaveLength(1);
    expect(messagesOf(fixture.server.requests[1]!.body).at(-1)).toMatchObject({
      role: 'user',
      content: 'queued prompt',
    });
  }, 120_000);

  it('Enter while a tool runs steers: the message lands in the next step of the same turn', async () => {
    fixture = await tuiFixture([
      {
        toolCalls: [
          { id: 'call_b1', name: 'bash', arguments: JSON.stringify({ command: 'sleep 2; echo slept' }) },
        ],
      },
      { text: 'Steered.' },
    ]);
    const tui = fixture.start(['--approve', 'yolo']);
    await tui.waitFor('Type a prompt');
    tui.type('run it');
    tui.type(keys.enter);
    await tui.waitFor(/bash \$ sleep 2; echo slept +running/);
    tui.type('use python instead');
    tui.type(keys.enter);
    const done = await tui.waitFor('turn 1 · completed');
    expect(done).toContain('» steer use python instead');
    expect(done).toContain('✓ exit 0');
    expect(done).toContain('Steered.');
    const [id] = fixture.sessionIds();
    await quit(tui);
    const events = (await fixture.events(id!)).filter((event) => event.type !== 'assistant/chunk');
    const result = events.findIndex((event) => event.type === 'tool/result');
    const steer = events.findIndex(
      (event) =>
        event.type === 'user/message' && (event.data as { source: { kind: string } }).source.kind === 'steer',
    );
    expect(steer).toBeGreaterThan(result);
    expect(events.slice(result + 1, steer + 1).map((event) => event.type)).toEqual([
      'step/end',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
    ]);
    expect(events[steer + 1]?.data).toMatchObject({ turn: 1, step: 2 });
    expect(fixture.server.requests).toHaveLength(2);
    expect(messagesOf(fixture.server.requests[1]!.body).at(-1)).toMatchObject({
      role: 'user',
      content: 'use python instead',
    });
  }, 120_000);

  it('queues with Alt+Enter and Ctrl-Q, removes one from the queue; the rest runs next', async () => {
    fixture = await tuiFixture([{ text: slowText('working', 60), delayMs: 40 }, { text: 'Second done.' }]);
    const tui = fixture.start();
    await tui.waitFor('Type a prompt');
    tui.type('start');
    tui.type(keys.enter);
    await tui.waitFor('working working');
    tui.type('first');
    tui.type(keys.altEnter);
    tui.type('second');
    tui.type(keys.ctrlQ);
    await tui.waitFor('queued (2)');
    tui.type(keys.shiftTab);
    await tui.waitFor('Del remove');
    tui.type(keys.delete);
    const removed = await tui.waitFor('Removed from the queue: first');
    expect(removed).toContain('queued (1)');
    expect(removed).toContain('[next turn] second');
    expect(removed).not.toContain('[next turn] first');
    tui.type(keys.escape);
    const done = await tui.waitFor('turn 2 · completed');
    expect(done).toContain('Second done.');
    const [id] = fixture.sessionIds();
    await quit(tui);
    const spliced = (await fixture.events(id!))
      .filter((event) => event.type === 'agent/inbox/spliced')
      .map((event) => event.data as { outcome?: string; removedCount?: number });
    expect(spliced.filter((data) => data.outcome === 'canceled')).toHaveLength(1);
    const asked = messagesOf(fixture.server.requests[1]!.body).filter((message) => message.role === 'user');
    expect(asked.map((message) => message.content)).toEqual(['start', 'second']);
  }, 120_000);
});
