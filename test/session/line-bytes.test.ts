import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineBytes } from '../../src/session/stores/line-bytes.ts';

// A `LineBytes` must write exactly the UTF-8 bytes of the text a template literal of the same parts
// gives: every part below is written both ways and the bytes compared.

/** Texts around the short-text bound (64), with escapes, controls, non-ASCII and lone surrogates. */
const text = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 70 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 60, maxLength: 70 }),
  fc.constantFrom(
    '',
    'ok',
    'call_0',
    '"quoted"',
    'back\\slash',
    'line\nbreak\ttab\u0000\u001f\u007f',
    'é漢🙂',
    '\u2028\u2029',
    '\ud800',
    'a\udc00b',
    '\udbff\udfff',
    'x'.repeat(64),
    `${'x'.repeat(63)}"`,
    `${'x'.repeat(65)}\\`,
    `${'y'.repeat(64)}é`,
    '9cc853ba-4e58-4806-8a45-b73e034fbe11',
  ),
);

/** Numbers whose text is easy to get wrong: -0, one digit, powers of ten, beyond 2^53, fractions. */
const number = fc.oneof(
  fc.integer(),
  fc.integer({ min: -12, max: 12 }),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 9, 10, 99, 100, 1e15, 1e21, 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 5e-324, 0.5, -1),
);

type Part =
  | { kind: 'byte'; code: number }
  | { kind: 'raw'; text: string }
  | { kind: 'json'; text: string }
  | { kind: 'number'; value: number }
  | { kind: 'head'; prefix: string; value: number; after: number };

const part: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ kind: fc.constant('byte' as const), code: fc.integer({ min: 0, max: 0x7f }) }),
  fc.record({ kind: fc.constant('raw' as const), text }),
  fc.record({ kind: fc.constant('json' as const), text }),
  fc.record({ kind: fc.constant('number' as const), value: number }),
  fc.record({
    kind: fc.constant('head' as const),
    prefix: fc.string({ unit: 'grapheme-ascii', maxLength: 64 }),
    value: number,
    after: fc.integer({ min: 0, max: 0x7f }),
  }),
);

/** What a template literal (or JSON.stringify) makes of a part. */
function expected(item: Part): string {
  switch (item.kind) {
    case 'byte':
      return String.fromCharCode(item.code);
    case 'raw':
      return item.text;
    case 'json':
      return JSON.stringify(item.text);
    case 'number':
      return `${item.value}`;
    case 'head':
      return `${item.prefix}${item.value}${String.fromCharCode(item.after)}`;
  }
}

function write(out: LineBytes, item: Part): void {
  switch (item.kind) {
    case 'byte':
      return out.byte(item.code);
    case 'raw':
      return out.raw(item.text);
    case 'json':
      return out.json(item.text);
    case 'number':
      return out.number(item.value);
    case 'head':
      return out.head(item.prefix, item.value, item.after);
  }
}

describe('LineBytes', () => {
  it('writes exactly the UTF-8 bytes of each part as a template literal gives it, across growth', () => {
    fc.assert(
      fc.property(fc.array(part, { maxLength: 60 }), (parts) => {
        // A small first buffer: a long run of parts grows it several times.
        const out = new LineBytes(16, 8);
        let text = '';
        for (const item of parts) {
          write(out, item);
          text += expected(item);
          expect(out.length).toBe(Buffer.byteLength(text, 'utf8'));
        }
        expect(Buffer.compare(out.bytes(), Buffer.from(text, 'utf8'))).toBe(0);
        expect(out.text()).toBe(Buffer.from(text, 'utf8').toString('utf8'));
      }),
      { numRuns: 300 },
    );
  });

  it('cuts back with truncate, reads from an offset, and starts again after clear', () => {
    const out = new LineBytes(8, 8);
    out.raw('[6,');
    out.number(12);
    const cut = out.length;
    out.json('é"');
    expect(out.text()).toBe('[6,12"é\\""');
    expect(out.text(cut)).toBe('"é\\""');
    out.truncate(cut);
    out.byte(0x5d);
    expect(out.text()).toBe('[6,12]');
    // Past its kept capacity the buffer is let go; the next write allocates a fresh one.
    out.raw('x'.repeat(5000));
    out.clear();
    expect(out.length).toBe(0);
    expect(out.bytes().length).toBe(0);
    out.head('[4,', 7, 0x2c);
    expect(out.text()).toBe('[4,7,');
  });
});
