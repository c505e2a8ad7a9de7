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
  const result = snapshotAt(value, path, '', 'none');
  // Only roots are remembered: a later snapshot that embeds this one (a message inside an event) shares
  // it whole. Marking every nested object would bloat the weak set, whose upkeep dominates GC time.
  if (remember && typeof result === 'object' && result !== null) frozenSnapshots.add(result);
  return result;
}

/**
 * How much of a value its caller hands over: `none` (copied), `root` (the root object is frozen in place,
 * its members copied) or `deep` (every unfrozen object is frozen in place: for freshly parsed JSON).
 */
export type AdoptMode = 'none' | 'root' | 'deep';

/**
 * Snapshots `value` with the path spelled `prefix + suffix` (joined only when a value is rejected).
 * With `adopt` other than `none`, the caller hands the value over (see AdoptMode) and must not keep it.
 */
export function snapshotAt<T>(value: T, prefix: string, suffix: string, adopt: AdoptMode): T {
  if (typeof value !== 'object' || value === null) {
    pathPrefix = prefix;
    pathSuffix = suffix;
    keyBase = keys.length;
    checkPrimitive(value);
    return value;
  }
  const savedPrefix = pathPrefix;
  const savedSuffix = pathSuffix;
  const savedKeyBase = keyBase;
  const savedAncestorBase = ancestorBase;
  const savedAdoptDeep = adoptDeep;
  pathPrefix = prefix;
  pathSuffix = suffix;
  keyBase = keys.length;
  ancestorBase = ancestors.length;
  try {
    if (adopt !== 'none' && !Object.isFrozen(value)) {
      adoptDeep = adopt === 'deep';
      return adoptInPlace(value) as T;
    }
    return copy(value) as T;
  } finally {
    // A rejection unwinds mid-walk; the shared stacks are cut back to where this snapshot began. Only
    // then: assigning `length`, even unchanged, makes V8 drop an emptied stack's storage (a reallocation).
    if (keys.length !== keyBase) keys.length = keyBase;
    if (ancestors.length !== ancestorBase) ancestors.length = ancestorBase;
    pathPrefix = savedPrefix;
    pathSuffix = savedSuffix;
    keyBase = savedKeyBase;
    ancestorBase = savedAncestorBase;
    adoptDeep = savedAdoptDeep;
  }
}

// The walk's position lives in two module-wide stacks, pushed and popped as it descends, so the hot path
// allocates no path strings and no per-level state. A getter that snapshots re-enters above the bases.
const keys: (string | number)[] = [];
const ancestors: object[] = [];
let pathPrefix = '$';
let pathSuffix = '';
let keyBase = 0;
let ancestorBase = 0;
// Whether adoption reaches below the root; set per snapshot (adoption never re-enters user code).
let adoptDeep = false;

function reject(reason: string, key?: string | number): never {
  let path = pathPrefix + pathSuffix;
  for (let index = keyBase; index < keys.length; index++) path += describeKey(keys[index]!);
  if (key !== undefined) path += describeKey(key);
  throw new LosslessJsonError(path, reason);
}

function describeKey(key: string | number): string {
  return typeof key === 'number' ? `[${key}]` : `.${key}`;
}

function checkPrimitive(value: unknown, key?: string | number): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) reject('non-finite number', key);
      if (value === 0 && 1 / value < 0) reject('negative zero', key);
      return;
    default:
      if (value !== null) reject(describeType(value), key);
  }
}

function checkPlain(value: object): void {
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) {
    reject(`instance of ${describeConstructor(value)}`);
  }
}

function adoptInPlace(value: object): object {
  if (ancestors.indexOf(value, ancestorBase) !== -1) reject('cycle');
  ancestors.push(value);
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) reject('sparse array', index);
      const member: unknown = value[index];
      if (typeof member === 'object' && member !== null) {
        keys.push(index);
        value[index] = adoptMember(member);
        keys.pop();
      } else checkPrimitive(member, index);
    }
  } else {
    checkPlain(value);
    const record = value as Record<string, unknown>;
    // for-in allocates no key array; a plain object's prototype contributes no enumerable keys.
    for (const key in record) {
      const member = record[key];
      if (typeof member === 'object' && member !== null) {
        keys.push(key);
        record[key] = adoptMember(member);
        keys.pop();
      } else checkPrimitive(member, key);
    }
  }
  ancestors.pop();
  return Object.freeze(value);
}

function adoptMember(member: object): object {
  return adoptDeep && !Object.isFrozen(member) ? adoptInPlace(member) : copy(member);
}

function copy(value: object): object {
  // Already-frozen plain snapshots are shared, not copied: messages are deep-frozen at creation.
  if (frozenSnapshots.has(value)) return value;
  // Ancestors are few (JSON nests shallowly), so a linear scan beats allocating a Set per snapshot.
  if (ancestors.indexOf(value, ancestorBase) !== -1) reject('cycle');
  ancestors.push(value);
  let result: unknown[] | Record<string, unknown>;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) reject('sparse array', index);
      const member: unknown = value[index];
      if (typeof member === 'object' && member !== null) {
        keys.push(index);
        out[index] = copy(member);
        keys.pop();
      } else {
        checkPrimitive(member, index);
        out[index] = member;
      }
    }
    result = out;
  } else {
    checkPlain(value);
    const out: Record<string, unknown> = {};
    const record = value as Record<string, unknown>;
    for (const key in record) {
      const member = record[key];
      if (typeof member === 'object' && member !== null) {
        keys.push(key);
        out[key] = copy(member);
        keys.pop();
      } else {
        checkPrimitive(member, key);
        out[key] = member;
      }
    }
    result = out;
  }
  ancestors.pop();
  return Object.freeze(result);
}

function describeType(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'bigint':
      return 'BigInt';
    case 'function':
      return 'function';
    case 'symbol':
      return 'symbol';
    default:
      return typeof value;
  }
}

// Objects this module produced: known frozen, known lossless, so they can be shared without a copy.
const frozenSnapshots = new WeakSet<object>();

function describeConstructor(value: object): string {
  const constructor = (value as { constructor?: { name?: unknown } }).constructor;
  return typeof constructor?.name === 'string' ? constructor.name : 'unknown class';
}

/**
 * Records a frozen, lossless-JSON root built without `snapshotJson` (a typed fast path's literal) as that
 * function's result would be, and returns it; the caller vouches for every level being frozen and valid.
 */
export function rememberSnapshot<T extends object>(value: T): T {
  frozenSnapshots.add(value);
  return value;
}

/** True when the value is the root of a `snapshotJson` result (and so is frozen, lossless JSON). */
export function isJsonSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && frozenSnapshots.has(value);
}
