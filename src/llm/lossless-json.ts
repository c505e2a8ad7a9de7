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
 */
export function snapshotJson<T>(value: T, path = '$'): T {
  return copy(value, path, new Set()) as T;
}

function copy(value: unknown, path: string, seen: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new LosslessJsonError(path, 'non-finite number');
      if (Object.is(value, -0)) throw new LosslessJsonError(path, 'negative zero');
      return value;
    case 'object': {
      if (value === null) return null;
      if (seen.has(value)) throw new LosslessJsonError(path, 'cycle');
      // Already-frozen plain snapshots are shared, not copied: messages are deep-frozen at creation.
      if (Object.isFrozen(value) && frozenSnapshots.has(value)) return value;
      seen.add(value);
      let result: unknown;
      if (Array.isArray(value)) {
        const out: unknown[] = new Array<unknown>(value.length);
        for (let index = 0; index < value.length; index++) {
          if (!(index in value)) throw new LosslessJsonError(`${path}[${index}]`, 'sparse array');
          out[index] = copy(value[index], `${path}[${index}]`, seen);
        }
        result = out;
      } else {
        const prototype = Object.getPrototypeOf(value) as unknown;
        if (prototype !== Object.prototype && prototype !== null) {
          throw new LosslessJsonError(path, `instance of ${describeConstructor(value)}`);
        }
        const out: Record<string, unknown> = {};
        for (const key of Object.keys(value)) {
          const member = (value as Record<string, unknown>)[key];
          if (member === undefined) throw new LosslessJsonError(`${path}.${key}`, 'undefined');
          out[key] = copy(member, `${path}.${key}`, seen);
        }
        result = out;
      }
      seen.delete(value);
      Object.freeze(result);
      frozenSnapshots.add(result as object);
      return result;
    }
    case 'undefined':
      throw new LosslessJsonError(path, 'undefined');
    case 'bigint':
      throw new LosslessJsonError(path, 'BigInt');
    case 'function':
      throw new LosslessJsonError(path, 'function');
    case 'symbol':
      throw new LosslessJsonError(path, 'symbol');
  }
}

// Objects this module produced: known frozen, known lossless, so they can be shared without a copy.
const frozenSnapshots = new WeakSet<object>();

function describeConstructor(value: object): string {
  const constructor = (value as { constructor?: { name?: unknown } }).constructor;
  return typeof constructor?.name === 'string' ? constructor.name : 'unknown class';
}

/** True when the value came out of `snapshotJson` (and so is frozen, lossless JSON). */
export function isJsonSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && frozenSnapshots.has(value);
}
