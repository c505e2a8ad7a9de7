import { afterEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import { encodeDeltaRuns } from '../../src/server/delta-runs.ts';
import { decodeDeltaRuns } from '../../web/src/delta-runs.ts';
import type { ServerFixture } from './support.ts';
import { openStream, serverFixture } from './support.ts';

const chunk = (seq: number, time: number, data: unknown, extra: object = {}): AnySessionEvent => ({
  type: 'assistant/chunk',
  seq,
  time,
  data,
  ...extra,
});
const delta = (seq: number, text: string, index = 0, time = 1_000 + seq): AnySessionEvent =>
  chunk(seq, time, { turn: 1, step: 1, chunk: { type: 'text-delta', index, text } });

// `batch=1&runs=1` (what the Web UI asks for): `log-runs` messages whose runs of deltas decode back to
// exactly the logged events.
describe('delta runs', () => {
  it('encodes consecutive deltas of one block as one run and decodes them to the same events', () => {
    const events: AnySessionEvent[] = [
      { type: 'step/start', seq: 10, time: 1_010, data: { turn: 1, step: 1 } },
      delta(11, 'Hello'),
      delta(12, ', ', 0, 1_012),
      delta(13, 'world', 0, 1_020),
      delta(14, 'other block', 1),
      delta(15, 'again', 1),
      chunk(16, 1_016, { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 2, text: 'hm' } }),
      chunk(17, 1_017, { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 2, text: 'm' } }),
      delta(18, 'lonely'),
    ];
    const entries = encodeDeltaRuns(events);
    expect(entries).toEqual([
      events[0],
      {
        run: 'text-delta',
        turn: 1,
        step: 1,
        index: 0,
        seq: 11,
        time: 1_011,
        texts: ['Hello', ', ', 'world'],
        gaps: [1, 8],
      },
      {
        run: 'text-delta',
        turn: 1,
        step: 1,
        index: 1,
        seq: 14,
        time: 1_014,
        texts: ['other block', 'again'],
        gaps: [1],
      },
      {
        run: 'reasoning-delta',
        turn: 1,
        step: 1,
        index: 2,
        seq: 16,
        time: 1_016,
        texts: ['hm', 'm'],
        gaps: [1],
      },
      events[8],
    ]);
    expect(decodeDeltaRuns(entries as Parameters<typeof decodeDeltaRuns>[0])).toEqual(events);
  });

  it('keeps as they are the events a run could not rebuild exactly', () => {
    const events: AnySessionEvent[] = [
      delta(1, 'a'),
      // Another envelope field, another chunk field, a fractional time, a gap in the seqs.
      chunk(
        2,
        1_002,
        { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'b' } },
        { ignorable: true },
      ),
      chunk(3, 1_003, { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'c', extra: 1 } }),
      delta(4, 'd', 0, 1_004.5),
      delta(5, 'e'),
      delta(7, 'f'),
      chunk(8, 1_008, { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'g' }, more: true }),
      delta(9, 'h'),
    ];
    const entries = encodeDeltaRuns(events);
    expect(entries).toEqual(events);
    expect(decodeDeltaRuns(entries as Parameters<typeof decodeDeltaRuns>[0])).toEqual(events);
  });
});

describe('session event stream in delta runs', () => {
  let f: ServerFixture;
  afterEach(async () => {
    await f.close();
  });

  it('sends every durable event once, in seq order, in few messages; resumes after the last id', async () => {
    const deltas = Array.from({ length: 400 }, (_, index) => `w${index} `);
    // A delta every millisecond: paced writes carry many of them per message.
    f = await serverFixture([{ text: 'first' }, { text: deltas, delayMs: 1 }]);
    const { id } = (await f.api('POST', '/api/sessions', {})).json as { id: string };
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'first' });
    const agent = f.harness.agents.get(id)!;
    await agent.whenIdle();
    const stream = await openStream(
      f.server.port,
      `/api/sessions/${id}/stream?token=${f.server.token}&batch=1&runs=1`,
    );
    const first = agent.session.length - 1;
    await stream.waitFor((frame) => frame.event === 'log-runs' && Number(frame.id) === first);

    // The answer streams live: its 400 deltas arrive as runs, never one message per delta.
    await f.api('POST', `/api/sessions/${id}/messages`, { text: 'second' });
    await agent.whenIdle();
    const last = agent.session.length - 1;
    await stream.waitFor((frame) => frame.event === 'log-runs' && Number(frame.id) === last);
    const messages = stream.frames.filter((frame) => frame.event === 'log-runs');
    expect(stream.frames.some((frame) => frame.event === 'log' || frame.event === 'log-batch')).toBe(false);
    const decoded = messages.map((frame) =>
      decodeDeltaRuns(frame.data as Parameters<typeof decodeDeltaRuns>[0]),
    );
    expect(decoded.flat()).toEqual(agent.session.events);
    for (const [index, frame] of messages.entries())
      expect(Number(frame.id)).toBe(decoded[index]!.at(-1)!.seq);
    // Runs carry the deltas (a message may start or end with a lone delta, sent as it is).
    const runTexts = messages.flatMap((frame) =>
      (frame.data as { run?: string; texts?: string[] }[]).flatMap((entry) => entry.texts ?? []),
    );
    expect(runTexts.length).toBeGreaterThanOrEqual(deltas.length - 2 * messages.length);
    expect(messages.length).toBeLessThan(deltas.length / 4);
    stream.close();

    const resumed = await openStream(
      f.server.port,
      `/api/sessions/${id}/stream?token=${f.server.token}&batch=1&runs=1`,
      { 'last-event-id': String(first) },
    );
    await resumed.waitFor((frame) => frame.event === 'log-runs' && Number(frame.id) === last);
    expect(
      resumed.frames
        .filter((frame) => frame.event === 'log-runs')
        .flatMap((frame) => decodeDeltaRuns(frame.data as Parameters<typeof decodeDeltaRuns>[0])),
    ).toEqual(agent.session.events.slice(first + 1));
    resumed.close();
  });
});
