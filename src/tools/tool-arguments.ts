import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import type { toJSONSchema as ZodToJsonSchema } from 'zod';
import type { JsonSchema } from '../llm/index.ts';
import type { Tool, ZodLikeSchema } from './tool.ts';
import { simpleSchemaCheck } from './simple-schema-check.ts';
import type { SimpleSchemaCheck } from './simple-schema-check.ts';

/** Parses raw model arguments: empty → `{}`, valid JSON → the value, invalid JSON → the raw string. */
export function parseToolArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    // Not JSON: the raw string itself goes to validation, which names the problem for the model.
    return raw;
  }
}

/** The JSON Schema the model sees for a tool that declares no parameters: any object. */
const openObjectSchema: JsonSchema = Object.freeze({ type: 'object', additionalProperties: true });

/**
 * Parses and validates a call's raw arguments. Arguments that are not JSON reach a tool without a
 * parameter schema (or with one that accepts the string) as the raw string; any other tool gets a
 * message that says they are not JSON.
 */
export function checkToolArguments(tool: Tool, raw: string): ArgumentCheck {
  const value = parseToolArguments(raw);
  const notJson = typeof value === 'string' && !isJsonText(raw);
  if (tool.parameters === undefined) return { ok: true, value };
  if (notJson) {
    const check = validateParsed(tool.parameters, value);
    return check.ok ? check : { ok: false, message: `arguments are not valid JSON: ${truncate(raw, 200)}` };
  }
  return validateParsed(tool.parameters, value);
}

function isJsonText(raw: string): boolean {
  try {
    JSON.parse(raw);
    return true;
  } catch {
    // Not JSON: the caller reports it as such.
    return false;
  }
}

/** True for a zod-like schema (has `safeParse`). */
export function isZodLikeSchema(schema: unknown): schema is ZodLikeSchema {
  return (
    typeof schema === 'object' && schema !== null && typeof (schema as ZodLikeSchema).safeParse === 'function'
  );
}

/** The outcome of validating arguments. */
export type ArgumentCheck = { ok: true; value: unknown } | { ok: false; message: string };

// Unknown formats (`uri` in MCP servers' schemas) are accepted silently rather than logged to the console.
// ajv and zod load on first use, not at start-up: many runs never validate a JSON Schema tool (`rein web`
// until the first call) or convert a zod schema (the built-in tools are JSON Schema), and both are large.
const requireLazily = createRequire(import.meta.url);
let ajv: Ajv | undefined;
function validator(): Ajv {
  if (ajv === undefined) {
    const ajvModule = requireLazily('ajv') as typeof import('ajv');
    ajv = new ajvModule.Ajv({ allErrors: true, strict: false, logger: false });
  }
  return ajv;
}

/** The JSON Schema of a zod schema: its own `toJSONSchema()` (zod ≥ 4.2), else this package's zod. */
function zodJsonSchema(schema: ZodLikeSchema): unknown {
  const own = (schema as { toJSONSchema?: () => unknown }).toJSONSchema;
  if (typeof own === 'function') return own.call(schema);
  const { toJSONSchema } = requireLazily('zod') as { toJSONSchema: typeof ZodToJsonSchema };
  return toJSONSchema(schema as unknown as Parameters<typeof ZodToJsonSchema>[0]);
}

const compiled = new WeakMap<object, ValidateFunction>();
// null: the schema needs ajv even for values it accepts.
const simpleChecks = new WeakMap<object, SimpleSchemaCheck | null>();
const jsonSchemas = new WeakMap<object, JsonSchema>();

/** The JSON Schema the model sees for a tool's parameters. */
export function toolParametersSchema(tool: Tool): JsonSchema {
  const schema = tool.parameters;
  if (schema === undefined) return openObjectSchema;
  if (!isZodLikeSchema(schema)) return schema;
  let converted = jsonSchemas.get(schema);
  if (converted === undefined) {
    const { $schema: _drop, ...rest } = zodJsonSchema(schema) as JsonSchema;
    converted = rest;
    jsonSchemas.set(schema, converted);
  }
  return converted;
}

/** Validates parsed arguments against a tool's schema; the message names each bad field. */
export function validateToolArguments(tool: Tool, value: unknown): ArgumentCheck {
  const schema = tool.parameters;
  if (schema === undefined) return { ok: true, value };
  if (typeof value === 'string') {
    const check = validateParsed(schema, value);
    return check.ok ? check : { ok: false, message: `arguments are not valid JSON: ${truncate(value, 200)}` };
  }
  return validateParsed(schema, value);
}

function validateParsed(schema: JsonSchema | ZodLikeSchema, value: unknown): ArgumentCheck {
  if (isZodLikeSchema(schema)) {
    const result = schema.safeParse(value);
    if (result.success) return { ok: true, value: result.data };
    const problems = result.error.issues.map(
      (issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`,
    );
    return { ok: false, message: problems.join('; ') };
  }
  // Loading ajv and compiling its meta-schema costs about 45 ms; schemas of the built-in tools' shape
  // are checked without it, and ajv only words the problems when a value is refused.
  let simple = simpleChecks.get(schema);
  if (simple === undefined) {
    simple = simpleSchemaCheck(schema) ?? null;
    simpleChecks.set(schema, simple);
  }
  if (simple?.(value) === true) return { ok: true, value };
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = validator().compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(value)) return { ok: true, value };
  const problems = (validate.errors ?? []).map((error) => {
    const missing = (error.params as { missingProperty?: string }).missingProperty;
    const field = missing ?? (error.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)');
    return `${field}: ${error.message ?? 'invalid'}`;
  });
  return { ok: false, message: problems.join('; ') || 'invalid arguments' };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
