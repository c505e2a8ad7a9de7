import { describe, expect, it } from 'vitest';
import { randomId } from '../../src/llm/random-id.ts';

const version4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('randomId', () => {
  it('gives RFC 4122 version 4 UUIDs, distinct, across many refills of its random pool', () => {
    const seen = new Set<string>();
    for (let index = 0; index < 5000; index++) {
      const id = randomId();
      expect(id).toMatch(version4);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
  });

  it('writes every hex digit: over many ids each position takes all sixteen values it may', () => {
    const digits = Array.from({ length: 36 }, () => new Set<string>());
    for (let index = 0; index < 4000; index++) {
      const id = randomId();
      for (let position = 0; position < 36; position++) digits[position]!.add(id[position]!);
    }
    for (let position = 0; position < 36; position++) {
      const expected = [8, 13, 18, 23].includes(position)
        ? 1
        : position === 14
          ? 1
          : position === 19
            ? 4
            : 16;
      expect(digits[position]!.size, `position ${position}`).toBe(expected);
    }
  });
});
