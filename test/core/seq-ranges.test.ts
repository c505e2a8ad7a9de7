import { describe, expect, it } from 'vitest';
import { SeqRanges } from '../../src/loop/seq-ranges.ts';

describe('seq ranges', () => {
  it('gives back exactly the seqs added, consecutive or not', () => {
    const cases = [[], [0], [5], [0, 1, 2], [0, 2, 4], [3, 4, 5, 9, 10, 12, 20, 21, 22, 23]];
    for (const seqs of cases) {
      const ranges = new SeqRanges();
      for (const seq of seqs) ranges.push(seq);
      const array = ranges.toArray();
      expect(array).toEqual(seqs);
      expect(array.length).toBe(seqs.length);
      expect(Object.keys(array)).toHaveLength(seqs.length);
    }
  });

  it('builds a fresh array on every call', () => {
    const ranges = new SeqRanges();
    ranges.push(1);
    const first = ranges.toArray();
    ranges.push(2);
    expect(first).toEqual([1]);
    expect(ranges.toArray()).toEqual([1, 2]);
  });
});
