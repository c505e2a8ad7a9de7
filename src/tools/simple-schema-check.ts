import type { JsonSchema } from '../llm/index.ts';

/** A compiled yes/no check of a value against a JSON Schema; never reports why (ajv does that). */
export type SimpleSchemaCheck = (value: unknown) => boolean;

const typeNames = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const nonNegativeIntegerKeywords = ['minLength', 'maxLength', 'minItems', 'maxItems'] as const;
const numberKeywords = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;
const knownKeywords = new Set<string>([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'description',
  'title',
  'default',
  'examples',
  ...nonNegativeIntegerKeywords,
  ...numberKeywords,
]);

type Primitive = string | number | boolean | null;

// Finite numbers only: NaN cannot come from JSON, and how ajv compares it is not worth mirroring.
function isPrimitive(value: unknown): value is Primitive {
  if (typeof value === 'number') return Number.isFinite(value);
  return value === null || typeof value === 'string' || typeof value === 'boolean';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

// The same tests as ajv's type checks with `strict: false` (no `isFinite` on numbers).
function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    case 'integer':
      return typeof value === 'number' && !(value % 1) && !Number.isNaN(value);
    case 'number':
      return typeof value === 'number';
    default:
      return typeof value === type;
  }
}

// ajv counts string length in code points, not UTF-16 units.
function codePoints(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    count++;
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
  }
  return count;
}

/**
 * Compiles a check that accepts exactly the values ajv (draft-07, `strict: false`, no formats) accepts,
 * for schemas built only from `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`
 * and `const` of primitives, the length, size and range keywords, and annotations: the shapes of the
 * built-in tools. Anything else (or a schema ajv would reject) gives undefined, and ajv does the work.
 */
export function simpleSchemaCheck(schema: JsonSchema): SimpleSchemaCheck | undefined {
  if (!isPlainObject(schema)) return undefined;
  for (const keyword of Object.keys(schema)) if (!knownKeywords.has(keyword)) return undefined;
  const checks: SimpleSchemaCheck[] = [];

  if (schema['title'] !== undefined && typeof schema['title'] !== 'string') return undefined;
  if (schema['description'] !== undefined && typeof schema['description'] !== 'string') return undefined;
  if (schema['examples'] !== undefined && !Array.isArray(schema['examples'])) return undefined;

  const type = schema['type'];
  if (type !== undefined) {
    const types = typeof type === 'string' ? [type] : type;
    if (!Array.isArray(types) || types.length === 0 || new Set(types).size !== types.length) return undefined;
    if (!types.every((name): name is string => typeof name === 'string' && typeNames.has(name))) {
      return undefined;
    }
    checks.push((value) => types.some((name) => hasType(value, name)));
  }

  for (const keyword of nonNegativeIntegerKeywords) {
    const limit = schema[keyword];
    if (limit === undefined) continue;
    if (!isNonNegativeInteger(limit)) return undefined;
    if (keyword === 'minLength')
      checks.push((value) => typeof value !== 'string' || codePoints(value) >= limit);
    if (keyword === 'maxLength')
      checks.push((value) => typeof value !== 'string' || codePoints(value) <= limit);
    if (keyword === 'minItems') checks.push((value) => !Array.isArray(value) || value.length >= limit);
    if (keyword === 'maxItems') checks.push((value) => !Array.isArray(value) || value.length <= limit);
  }

  for (const keyword of numberKeywords) {
    const limit = schema[keyword];
    if (limit === undefined) continue;
    if (typeof limit !== 'number' || !Number.isFinite(limit)) return undefined;
    // ajv fails NaN against every limit.
    const within =
      keyword === 'minimum'
        ? (number: number) => number >= limit
        : keyword === 'maximum'
          ? (number: number) => number <= limit
          : keyword === 'exclusiveMinimum'
            ? (number: number) => number > limit
            : (number: number) => number < limit;
    checks.push((value) => typeof value !== 'number' || within(value));
  }

  const allowed = schema['enum'];
  if (allowed !== undefined) {
    if (!Array.isArray(allowed) || allowed.length === 0 || !allowed.every(isPrimitive)) return undefined;
    checks.push((value) => allowed.includes(value as Primitive));
  }
  if ('const' in schema) {
    const constant = schema['const'];
    if (!isPrimitive(constant)) return undefined;
    checks.push((value) => value === constant);
  }

  const required = schema['required'];
  if (required !== undefined) {
    if (!Array.isArray(required) || !required.every((name) => typeof name === 'string')) return undefined;
    if (new Set(required).size !== required.length) return undefined;
    // Like ajv: a property counts as present when reading it does not give undefined.
    checks.push(
      (value) => !isPlainObject(value) || required.every((name: string) => value[name] !== undefined),
    );
  }

  const properties = schema['properties'];
  const propertyNames = new Set<string>();
  if (properties !== undefined) {
    if (!isPlainObject(properties)) return undefined;
    const compiled: [string, SimpleSchemaCheck][] = [];
    for (const [name, subschema] of Object.entries(properties)) {
      if (name === '__proto__' || !isPlainObject(subschema)) return undefined;
      const check = simpleSchemaCheck(subschema);
      if (check === undefined) return undefined;
      compiled.push([name, check]);
      propertyNames.add(name);
    }
    checks.push(
      (value) =>
        !isPlainObject(value) ||
        compiled.every(([name, check]) => value[name] === undefined || check(value[name])),
    );
  }

  const additional = schema['additionalProperties'];
  if (additional !== undefined) {
    let check: SimpleSchemaCheck | undefined;
    if (additional === false) check = () => false;
    else if (additional === true) check = undefined;
    else if (isPlainObject(additional)) {
      check = simpleSchemaCheck(additional);
      if (check === undefined) return undefined;
    } else return undefined;
    if (check !== undefined) {
      const extra = check;
      checks.push((value) => {
        if (!isPlainObject(value)) return true;
        for (const name in value) if (!propertyNames.has(name) && !extra(value[name])) return false;
        return true;
      });
    }
  }

  const items = schema['items'];
  if (items !== undefined) {
    if (!isPlainObject(items)) return undefined;
    const check = simpleSchemaCheck(items);
    if (check === undefined) return undefined;
    checks.push((value) => {
      if (!Array.isArray(value)) return true;
      for (let index = 0; index < value.length; index++) if (!check(value[index])) return false;
      return true;
    });
  }

  return (value) => checks.every((check) => check(value));
}
