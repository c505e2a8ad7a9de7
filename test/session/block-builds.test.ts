import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockBuilds } from '../../src/session/stores/block-builds.ts';
import type { BlockBuild } from '../../src/session/stores/block-builds.ts';

const build = (text: string): BlockBuild => ({ kind: 'text', text, id: undefined, name: undefined });

type Operation =
  | { op: 'get'; index: number }
  | { op: 'set'; index: number; text: string }
  | { op: 'delete'; index: number }
  | { op: 'clear' };

// Indexes up to 20: enough open blocks at once to move past the in-place slots to the Map and back.
const index = fc.integer({ min: 0, max: 20 });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('get' as const), index }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('set' as const), index, text: fc.string() }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), index }), weight: 2 },
  { arbitrary: fc.constant({ op: 'clear' as const }), weight: 1 },
);

describe('BlockBuilds', () => {
  it('answers get, set, delete, clear and size exactly as a Map does', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 120 }), (operations) => {
        const builds = new BlockBuilds();
        const model = new Map<number, BlockBuild>();
        for (const step of operations) {
          if (step.op === 'get') expect(builds.get(step.index)).toBe(model.get(step.index));
          else if (step.op === 'set') {
            const value = build(step.text);
            builds.set(step.index, value);
            model.set(step.index, value);
          } else if (step.op === 'delete') {
            builds.delete(step.index);
            model.delete(step.index);
          } else {
            builds.clear();
            model.clear();
          }
          expect(builds.size).toBe(model.size);
        }
        for (let key = 0; key <= 20; key++) expect(builds.get(key)).toBe(model.get(key));
      }),
    );
  });

  it('keeps many open blocks past the in-place slots, then searches in place again after clear', () => {
    const builds = new BlockBuilds();
    const values = Array.from({ length: 100 }, (_, key) => build(String(key)));
    values.forEach((value, key) => builds.set(key * 3, value));
    expect(builds.size).toBe(100);
    values.forEach((value, key) => expect(builds.get(key * 3)).toBe(value));
    builds.delete(30);
    expect(builds.get(30)).toBeUndefined();
    expect(builds.size).toBe(99);
    builds.clear();
    expect(builds.size).toBe(0);
    builds.set(1, values[0]!);
    expect(builds.get(1)).toBe(values[0]);
    expect(builds.size).toBe(1);
  });
});
