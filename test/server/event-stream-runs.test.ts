import { afterEach, describe, expect, it } from 'vitest';
import type { AnySessionEvent } from '../../src/index.ts';
import { compactSession } from '../../src/index.ts';
import { DeltaRunEncoder, encodeDeltaRuns } from '../../src/server/delta-runs.ts';
import { DeltaRunDecoder, DeltaRunMismatchError, decodeDeltaRuns } from '../../web/src/delta-runs.ts';
import type { LogRunEntry } from '../../web/src/delta-runs.ts';
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

describe('streamed blocks across messages', () => {
  const reasoning = (seq: number, text: string): AnySessionEvent =>
    chunk(seq, 1_000 + seq, { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text } });
  const text = (seq: number, piece: string): AnySessionEvent => delta(seq, piece, 1);
  const message = (seq: number, blocks: object[], step = 1): AnySessionEvent => ({
    type: 'assistant/message',
    seq,
    time: 1_000 + seq,
    data: { turn: 1, step, message: { role: 'assistant', content: blocks, id: `m${seq}` } },
    surfaceOp: 'append',
  });
  const blockEnd = (seq: number, index: number, block: object): AnySessionEvent =>
    chunk(seq, 1_000 + seq, { turn: 1, step: 1, chunk: { type: 'block-end', index, block } });

  it('sends block ends and the message without the text their deltas carried; decodes them as logged', () => {
    const messages: AnySessionEvent[][] = [
      [reasoning(1, 'Let me '), reasoning(2, 'think.'), text(3, 'The answer')],
      [
        text(4, ' is 42.'),
        blockEnd(5, 0, { type: 'reasoning', text: 'Let me think.', signature: 'sig' }),
        blockEnd(6, 1, { type: 'text', text: 'The answer is 42.' }),
      ],
      [
        message(7, [
          { type: 'reasoning', text: 'Let me think.', signature: 'sig' },
          { type: 'text', text: 'The answer is 42.' },
          { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{}' },
        ]),
        // The next step's answer has no deltas in this stream: it goes as logged.
        message(8, [{ type: 'text', text: 'The answer is 42.' }], 2),
      ],
    ];
    const encoder = new DeltaRunEncoder();
    const decoder = new DeltaRunDecoder();
    const encoded = messages.map((events) => encoder.encode(events));
    expect(encoded[1]![1]).toEqual({
      ended: blockEnd(5, 0, { type: 'reasoning', text: '', signature: 'sig' }),
    });
    expect(encoded[2]![0]).toEqual({
      streamed: message(7, [
        { type: 'reasoning', text: '', signature: 'sig' },
        { type: 'text', text: '' },
        { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{}' },
      ]),
      from: [
        [0, 0],
        [1, 1],
      ],
    });
    expect(encoded[2]![1]).toBe(messages[2]![1]);
    const wire = encoded.map((entries) => JSON.parse(JSON.stringify(entries)) as LogRunEntry[]);
    expect(wire.flatMap((entries) => decoder.decode(entries))).toEqual(messages.flat());
  });

  it('sends a block whole when its deltas differ (a retried attempt); a decoder without them refuses', () => {
    const events = [
      text(1, 'cut sh'),
      text(2, 'The full answer.'),
      message(3, [{ type: 'text', text: 'The full answer.' }]),
    ];
    const entries = new DeltaRunEncoder().encode(events);
    expect(entries.at(-1)).toBe(events[2]);
    expect(new DeltaRunDecoder().decode(entries as LogRunEntry[])).toEqual(events);

    const encoder = new DeltaRunEncoder();
    encoder.encode([text(1, 'The full answer.')]);
    const late = encoder.encode([message(2, [{ type: 'text', text: 'The full answer.' }])]);
    expect(() => new DeltaRunDecoder().decode(late as LogRunEntry[])).toThrow(DeltaRunMismatchError);
  });
});

describe('source seqs as ranges', () => {
  const sourcedMessage = (seq: number, text: string, sources: number[]): AnySessionEvent => ({
    type: 'assistant/message',
    seq,
    time: 1_000 + seq,
    data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text }], id: 'm' } },
    surfaceOp: 'append',
    sourceEventSeqs: sources,
  });
  const seqs = (first: number, count: number): number[] =>
    Array.from({ length: count }, (_, at) => first + at);

  it('sends a long answer’s source seqs as ranges, with the streamed message; decodes the message as logged', () => {
    const pieces = seqs(1, 200).map((seq) => `w${seq} `);
    const deltas = pieces.map((piece, at) => delta(at + 1, piece));
    const answer = sourcedMessage(201, pieces.join(''), seqs(1, 200));
    const encoder = new DeltaRunEncoder();
    const encoded = [encoder.encode(deltas.slice(0, 150)), encoder.encode([...deltas.slice(150), answer])];
    const last = encoded[1]!.at(-1)!;
    const { sourceEventSeqs: _listed, ...bare } = answer;
    expect(last).toStrictEqual({
      sourced: {
        streamed: {
          ...bare,
          data: {
            ...(answer.data as object),
            message: { role: 'assistant', content: [{ type: 'text', text: '' }], id: 'm' },
          },
        },
        from: [[0, 0]],
      },
      sources: [[1, 200]],
    });
    expect(JSON.stringify(last).length).toBeLessThan(400);
    const wire = encoded.map((entries) => JSON.parse(JSON.stringify(entries)) as LogRunEntry[]);
    const decoder = new DeltaRunDecoder();
    const decoded = wire.flatMap((entries) => decoder.decode(entries));
    expect(decoded).toEqual([...deltas, answer]);
    // The field comes back where it was logged: last.
    expect(Object.keys(decoded.at(-1)!)).toEqual(Object.keys(answer));
  });

  it('sends an event with ranged sources on its own, and keeps short or scattered seq lists as they are', () => {
    // No deltas in this stream: the message goes as logged, its seqs as ranges (two runs).
    const ranged = sourcedMessage(500, 'Done.', [...seqs(10, 100), ...seqs(300, 100)]);
    const short = sourcedMessage(501, 'Done.', seqs(10, 20));
    const scattered = sourcedMessage(
      502,
      'Done.',
      seqs(0, 100).map((at) => at * 2),
    );
    const entries = new DeltaRunEncoder().encode([ranged, short, scattered]);
    const { sourceEventSeqs: _listed, ...bare } = ranged;
    expect(entries[0]).toStrictEqual({
      sourced: bare,
      sources: [
        [10, 100],
        [300, 100],
      ],
    });
    expect(entries[1]).toBe(short);
    expect(entries[2]).toBe(scattered);
    const wire = JSON.parse(JSON.stringify(entries)) as LogRunEntry[];
    expect(new DeltaRunDecoder().decode(wire)).toEqual([ranged, short, scattered]);
  });
});

describe('a compaction summary and its checkpoint', () => {
  const summaryEvent = (seq: number, summary: string): AnySessionEvent => ({
    type: 'compaction/summary',
    seq,
    time: 1_000 + seq,
    data: { compactionId: 'c1', summary, shadowedSeqs: [1, 2, 3] },
  });
  const checkpoint = (seq: number, text: string): AnySessionEvent => ({
    type: 'user/message',
    seq,
    time: 1_000 + seq,
    data: { content: [{ type: 'text', text }] },
    surfaceOp: { op: 'replace', start: 1, end: 3 },
    sourceEventSeqs: [seq - 2, seq - 1, 1, 2, 3],
  });

  it('sends the checkpoint without the summary it frames; decodes it as logged', () => {
    const summary = 'The work so far: '.repeat(400);
    const events = [
      summaryEvent(10, summary),
      checkpoint(11, `<summary>\n${summary}\n</summary>`),
      { type: 'compaction/end', seq: 12, time: 1_012, data: { compactionId: 'c1' } },
    ];
    const encoder = new DeltaRunEncoder();
    const entries = [encoder.encode(events.slice(0, 1)), encoder.encode(events.slice(1))];
    expect(entries[1]![0]).toStrictEqual({
      framed: checkpoint(11, ''),
      block: 0,
      before: '<summary>\n',
      after: '\n</summary>',
    });
    expect(JSON.stringify(entries[1]).length).toBeLessThan(400);
    const wire = entries.map((batch) => JSON.parse(JSON.stringify(batch)) as LogRunEntry[]);
    const decoder = new DeltaRunDecoder();
    expect(wire.flatMap((batch) => decoder.decode(batch))).toEqual(events);
    // A stream that did not carry the summary cannot rebuild the checkpoint: it starts over.
    expect(() => new DeltaRunDecoder().decode(wire[1]!)).toThrow(DeltaRunMismatchError);
  });

  it('sends a short summary’s checkpoint, or one that does not contain the summary, as logged', () => {
    const short = [summaryEvent(10, 'Short.'), checkpoint(11, '<summary>Short.</summary>')];
    expect(new DeltaRunEncoder().encode(short)).toEqual(short);
    const long = 'x'.repeat(5_000);
    const other = [summaryEvent(10, long), checkpoint(11, 'y'.repeat(5_000))];
    expect(new DeltaRunEncoder().encode(other)).toEqual(other);
  });
});

describe('session event stream in delta runs', () => {
  let f: ServerFixture;
  afterEach(async () => {
    await f.close();
  });

  it('sends a live compaction’s checkpoint without the summary it frames, decoded as logged', async () => {
    const summary = `Summary-7f3a: ${'facts kept from the earlier turns. '.repeat(150)}`;
    const long = (turn: number): string => `Answer ${turn}: ${'a long paragraph of findings. '.repeat(700)}`;
    f = await serverFixture([{ text: long(1) }, { text: long(2) }, { text: long(3) }, { text: summary }]);
    const { id } = (await f.api('POST', '/api/sessions', {})).json as { id: string };
    const agent = (): NonNullable<ReturnType<typeof f.harness.agents.get>> => f.harness.agents.get(id)!;
    for (const text of ['one', 'two', 'three']) {
      await f.api('POST', `/api/sessions/${id}/messages`, { text });
      await agent().whenIdle();
    }
    const stream = await openStream(
      f.server.port,
      `/api/sessions/${id}/stream?token=${f.server.token}&batch=1&runs=1`,
    );
    const first = agent().session.length - 1;
    await stream.waitFor((frame) => frame.event === 'log-runs' && Number(frame.id) === first);
    expect(await compactSession(f.harness, agent())).toMatchObject({ compacted: true });
    const last = agent().session.length - 1;
    await stream.waitFor((frame) => frame.event === 'log-runs' && Number(frame.id) === last);
    const messages = stream.frames.filter((frame) => frame.event === 'log-runs');
    const decoder = new DeltaRunDecoder();
    expect(messages.flatMap((frame) => decoder.decode(frame.data as LogRunEntry[]))).toEqual(
      agent().session.events,
    );
    const checkpoint = agent().session.events.find((event) => event.type === 'compaction/summary')!.seq + 1;
    const sent = messages.flatMap(
      (frame) => frame.data as { framed?: AnySessionEvent; sourced?: { framed?: AnySessionEvent } }[],
    );
    const framed = sent
      .map((entry) => entry.sourced?.framed ?? entry.framed)
      .filter((event) => event !== undefined);
    expect(framed.map((event) => [event.type, event.seq])).toEqual([['user/message', checkpoint]]);
    // The summary crossed once: in the compaction/summary event only.
    const wire = JSON.stringify(messages.map((frame) => frame.data));
    expect(wire.split('Summary-7f3a').length - 1).toBe(1);
    stream.close();
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
    // One decoder for the stream, as the page has: an answer's block end and message refer to the
    // deltas this stream carried before them, so the answer's text crosses the wire once.
    const decoder = new DeltaRunDecoder();
    const decoded = messages.map((frame) => decoder.decode(frame.data as LogRunEntry[]));
    expect(decoded.flat()).toEqual(agent.session.events);
    type Entry = { streamed?: AnySessionEvent; ended?: AnySessionEvent; from?: unknown };
    const sent = messages.flatMap(
      (frame) => frame.data as (Entry & { sourced?: Entry; sources?: [number, number][] })[],
    );
    const entries = sent.map((entry) => entry.sourced ?? entry);
    const answers = agent.session.events.filter((event) => event.type === 'assistant/message');
    // The long answer's source seqs (its 400 deltas, consecutive) went as one range.
    const long = answers.at(-1)!;
    expect(long.sourceEventSeqs?.length).toBeGreaterThanOrEqual(deltas.length);
    expect(sent.find((entry) => entry.sourced?.streamed?.seq === long.seq)?.sources).toEqual([
      [long.sourceEventSeqs![0], long.sourceEventSeqs!.length],
    ]);
    const streamed = entries.filter((entry) => entry.streamed !== undefined);
    expect(streamed.map((entry) => entry.streamed!.seq)).toEqual(answers.map((event) => event.seq));
    for (const entry of streamed) {
      expect(entry.from).toEqual([[0, 0]]);
      expect(entry.streamed!.data).toMatchObject({ message: { content: [{ type: 'text', text: '' }] } });
    }
    const ends = agent.session.events.filter(
      (event) =>
        event.type === 'assistant/chunk' &&
        (event.data as { chunk: { type: string } }).chunk.type === 'block-end',
    );
    expect(ends.length).toBe(2);
    const ended = entries.filter((entry) => entry.ended !== undefined);
    expect(ended.map((entry) => entry.ended!.seq)).toEqual(ends.map((event) => event.seq));
    for (const entry of ended)
      expect(entry.ended!.data).toMatchObject({ chunk: { block: { type: 'text', text: '' } } });
    const answer = deltas.join('');
    expect(messages.some((frame) => JSON.stringify(frame.data).includes(answer))).toBe(false);
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
    const resumedDecoder = new DeltaRunDecoder();
    expect(
      resumed.frames
        .filter((frame) => frame.event === 'log-runs')
        .flatMap((frame) => resumedDecoder.decode(frame.data as LogRunEntry[])),
    ).toEqual(agent.session.events.slice(first + 1));
    resumed.close();
  });
});
