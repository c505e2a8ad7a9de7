/** Thrown when a value is not plain, lossless JSON; `path` names the offending spot. */
export class LosslessJsonError extends Error {
  readonly code = 'INVALID_JSON_DATA';
  readonly path: string;
  constructor(path: string, reason: string) {
    super(`not lossless JSON at ${path}: ${reason}`);
    this.path = path;
    this.name = 'LosslessJsonError';
  }
}

/**
 * Deep-copies a value that must be lossless JSON and freezes the copy; throws LosslessJsonError on
 * BigInt, functions, undefined, -0, non-finite numbers, cycles, sparse arrays or class instances.
 * With `remember` (the default) the copy's root is recorded so that later snapshots embed it uncopied.
 */
export function snapshotJson<T>(value: T, path = '$', remember = true): T {
  const result = copy(value, { root: path, keys: [], ancestors: [] });
  // Only roots are remembered: a later snapshot that embeds this one (a message inside an event) shares
  // it whole. Marking every nested object would bloat the weak set, whose upkeep dominates GC time.
  if (remember && typeof result === 'object' && result !== null) frozenSnapshots.add(result);
  return result as T;
}

// The walk's position: keys and ancestors are pushed and popped as it descends, so the hot path
// allocates no path strings; the path is spelled out only when a value is rejected.
interface Walk {
  readonly root: string;
  readonly keys: (string | number)[];
  readonly ancestors: object[];
}

function reject(walk: Walk, reason: string, key?: string | number): never {
  let path = walk.root;
  const keys = key === undefined ? walk.keys : [...walk.keys, key];
  for (const part of keys) path += typeof part === 'number' ? `[${part}]` : `.${part}`;
  throw new LosslessJsonError(path, reason);
}

function copy(value: unknown, walk: Walk): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) reject(walk, 'non-finite number');
      if (Object.is(value, -0)) reject(walk, 'negative zero');
      return value;
    case 'object': {
      if (value === null) return null;
      // Already-frozen plain snapshots are shared, not copied: messages are deep-frozen at creation.
      if (frozenSnapshots.has(value)) return value;
      // Ancestors are few (JSON nests shallowly), so a linear scan beats allocating a Set per snapshot.
      if (walk.ancestors.includes(value)) reject(walk, 'cycle');
      walk.ancestors.push(value);
      let result: unknown;
      if (Array.isArray(value)) {
        const out: unknown[] = new Array<unknown>(value.length);
        for (let index = 0; index < value.length; index++) {
          if (!(index in value)) reject(walk, 'sparse array', index);
          walk.keys.push(index);
          out[index] = copy(value[index], walk);
          walk.keys.pop();
        }
        result = out;
      } else {
        const prototype = Object.getPrototypeOf(value) as unknown;
        if (prototype !== Object.prototype && prototype !== null) {
          reject(walk, `instance of ${describeConstructor(value)}`);
        }
        const out: Record<string, unknown> = {};
        for (const key of Object.keys(value)) {
          const member = (value as Record<string, unknown>)[key];
          if (member === undefined) reject(walk, 'undefined', key);
          walk.keys.push(key);
          out[key] = copy(member, walk);
          walk.keys.pop();
        }
        result = out;
      }
      walk.ancestors.pop();
      return Object.freeze(result);
    }
    case 'undefined':
      return reject(walk, 'undefined');
    case 'bigint':
      return reject(walk, 'BigInt');
    case 'function':
      return reject(walk, 'function');
    case 'symbol':
      return reject(walk, 'symbol');
  }
}

// Objects this module produced: known frozen, known lossless, so they can be shared without a copy.
const frozenSnapshots = new WeakSet<object>();

function describeConstructor(value: object): string {
  const constructor = (value as { constructor?: { name?: unknown } }).constructor;
  return typeof constructor?.name === 'string' ? constructor.name : 'unknown class';
}

/** True when the value is the root of a `snapshotJson` result (and so is frozen, lossless JSON). */
export function isJsonSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && frozenSnapshots.has(value);
}
