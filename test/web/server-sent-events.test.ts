import { describe, expect, it } from 'vitest';
import { ServerSentEventParser } from '../../web/src/server-sent-events.ts';
import type { ServerSentEvent } from '../../web/src/server-sent-events.ts';

const encoder = new TextEncoder();

/** Every message the parser dispatches when the stream's bytes arrive cut at the given offsets. */
function parse(text: string | Uint8Array, cuts: readonly number[] = []): ServerSentEvent[] {
  const bytes = typeof text === 'string' ? encoder.encode(text) : text;
  const parser = new ServerSentEventParser();
  const messages: ServerSentEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    messages.push(...parser.push(bytes.subarray(from, cut)));
    from = cut;
  }
  parser.end();
  return messages;
}

// The examples of the HTML standard's "Interpreting an event stream" and the Rein server's own framing.
const stream = [
  'retry: 1000\n\n',
  ': keep-alive\n\n',
  'id: 7\nevent: log-batch\ndata: [{"seq":6},{"seq":7}]\n\n',
  'data: YHOO\ndata: +2\ndata: 10\n\n',
  'data\n\ndata\ndata\n\ndata:\n\n',
  'data:test\n\ndata: test\n\n',
  'event: status\r\ndata: {"status":"idle"}\r\n\r\n',
  'event: inbox\rdata: {"nextTurn":[]}\r\r',
  'id\nevent: cleared\ndata: x\n\n',
  'event: only-a-type\n\n',
  'data: ünïcødé ✓ 🙂\n\n',
  'field-without-colon\nunknown: value\ndata: kept\n\n',
].join('');

const expected: ServerSentEvent[] = [
  { event: 'log-batch', data: '[{"seq":6},{"seq":7}]', lastEventId: '7' },
  { event: 'message', data: 'YHOO\n+2\n10', lastEventId: '7' },
  { event: 'message', data: '', lastEventId: '7' },
  { event: 'message', data: '\n', lastEventId: '7' },
  { event: 'message', data: '', lastEventId: '7' },
  { event: 'message', data: 'test', lastEventId: '7' },
  { event: 'message', data: 'test', lastEventId: '7' },
  { event: 'status', data: '{"status":"idle"}', lastEventId: '7' },
  { event: 'inbox', data: '{"nextTurn":[]}', lastEventId: '7' },
  { event: 'cleared', data: 'x', lastEventId: '' },
  { event: 'message', data: 'ünïcødé ✓ 🙂', lastEventId: '' },
  { event: 'message', data: 'kept', lastEventId: '' },
];

describe('ServerSentEventParser', () => {
  it('dispatches what the standard dispatches: fields, comments, line ends, ids, empty data', () => {
    const parser = new ServerSentEventParser();
    expect(parser.push(encoder.encode(stream))).toEqual(expected);
    expect(parser.retryMs).toBe(1000);
    expect(parser.lastEventId).toBe('');
  });

  it('gives the same messages however the bytes are cut (inside lines, CRLFs and UTF-8 sequences)', () => {
    const bytes = encoder.encode(stream);
    for (let cut = 0; cut <= bytes.length; cut++) expect(parse(bytes, [cut])).toEqual(expected);
    // Random cuts, several per stream.
    let seed = 7;
    const random = (limit: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % limit;
    };
    for (let round = 0; round < 200; round++) {
      const cuts = Array.from({ length: 1 + random(12) }, () => random(bytes.length + 1)).sort(
        (a, b) => a - b,
      );
      expect(parse(bytes, cuts)).toEqual(expected);
    }
    // One byte at a time.
    expect(
      parse(
        bytes,
        Array.from({ length: bytes.length }, (_, index) => index),
      ),
    ).toEqual(expected);
  });

  it('joins a long line that arrives in many reads once, equal to the line sent', () => {
    const payload = JSON.stringify({ summary: 'x'.repeat(300_000) + '\u00e9'.repeat(100_000) });
    const bytes = encoder.encode(`event: log-runs\ndata: ${payload}\n\n`);
    const cuts = Array.from(
      { length: Math.floor(bytes.length / 65_536) },
      (_, index) => (index + 1) * 65_536 - 1,
    );
    expect(parse(bytes, cuts)).toEqual([{ event: 'log-runs', data: payload, lastEventId: '' }]);
  });

  it('drops one leading byte order mark, keeps a later one, and replaces invalid UTF-8', () => {
    expect(parse('\uFEFFdata: a\n\n')).toEqual([{ event: 'message', data: 'a', lastEventId: '' }]);
    expect(parse('\uFEFFdata: a\n\n', [1, 2])).toEqual([{ event: 'message', data: 'a', lastEventId: '' }]);
    expect(parse('data: \uFEFFa\n\n')).toEqual([{ event: 'message', data: '\uFEFFa', lastEventId: '' }]);
    const invalid = new Uint8Array([...encoder.encode('data: '), 0xff, 0x41, ...encoder.encode('\n\n')]);
    expect(parse(invalid)).toEqual([{ event: 'message', data: '\uFFFDA', lastEventId: '' }]);
  });

  it('never dispatches a message cut off by the end of the stream', () => {
    expect(parse('data: whole\n\ndata: cut off\n')).toEqual([
      { event: 'message', data: 'whole', lastEventId: '' },
    ]);
    expect(parse('data: whole\n\ndata: cut off')).toEqual([
      { event: 'message', data: 'whole', lastEventId: '' },
    ]);
    // After `end`, the parser starts clean: nothing of the cut-off message leaks into the next stream's.
    const parser = new ServerSentEventParser();
    parser.push(encoder.encode('event: half\ndata: one'));
    parser.end();
    expect(parser.push(encoder.encode('data: two\n\n'))).toEqual([
      { event: 'message', data: 'two', lastEventId: '' },
    ]);
  });

  it('ignores an id with a NUL, and a retry that is not all digits', () => {
    const parser = new ServerSentEventParser();
    expect(parser.push(encoder.encode('id: 3\nretry: 500\n\nid: a\u0000b\nretry: 5s\ndata: d\n\n'))).toEqual([
      { event: 'message', data: 'd', lastEventId: '3' },
    ]);
    expect(parser.retryMs).toBe(500);
  });
});
