import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RepeatedJsonString } from '../../src/session/stores/repeated-json-string.ts';

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', 'ok', 'tool-call', '"quoted"', 'back\\slash', 'a\nb\u0000', '\ud800', 'é漢🙂'),
);

describe('RepeatedJsonString', () => {
  it('gives exactly JSON.stringify of each text, repeated or changed', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 40 }), (texts) => {
        const quoted = new RepeatedJsonString();
        for (const value of texts) {
          expect(quoted.of(value)).toBe(JSON.stringify(value));
          expect(quoted.of(value)).toBe(JSON.stringify(value));
        }
      }),
    );
  });

  it('tells apart texts equal in length but not in content', () => {
    const quoted = new RepeatedJsonString();
    expect(quoted.of('ab')).toBe('"ab"');
    expect(quoted.of('a"')).toBe('"a\\""');
    expect(quoted.of('ab')).toBe('"ab"');
  });
});
