import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import { toJSONSchema } from 'zod';
import type { JsonSchema } from '../llm/index.ts';
import type { Tool, ZodLikeSchema } from './tool.ts';

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

/** True for a zod-like schema (has `safeParse`). */
export function isZodLikeSchema(schema: unknown): schema is ZodLikeSchema {
  return (
    typeof schema === 'object' && schema !== null && typeof (schema as ZodLikeSchema).safeParse === 'function'
  );
}

/** The outcome of validating arguments. */
export type ArgumentCheck = { ok: true; value: unknown } | { ok: false; message: string };

// Unknown formats (`uri` in servers' schemas) are accepted silently rather than logged to the console.
const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
const compiled = new WeakMap<object, ValidateFunction>();
const jsonSchemas = new WeakMap<object, JsonSchema>();

/** The JSON Schema the model sees for a tool's parameters. */
export function toolParametersSchema(tool: Tool): JsonSchema {
  const schema = tool.parameters;
  if (!isZodLikeSchema(schema)) return schema;
  let converted = jsonSchemas.get(schema);
  if (converted === undefined) {
    const { $schema: _drop, ...rest } = toJSONSchema(
      schema as unknown as Parameters<typeof toJSONSchema>[0],
    ) as JsonSchema;
    converted = rest;
    jsonSchemas.set(schema, converted);
  }
  return converted;
}

/** Validates parsed arguments against a tool's schema; the message names each bad field. */
export function validateToolArguments(tool: Tool, value: unknown): ArgumentCheck {
  const schema = tool.parameters;
  if (typeof value === 'string') {
    return { ok: false, message: `arguments are not valid JSON: ${truncate(value, 200)}` };
  }
  if (isZodLikeSchema(schema)) {
    const result = schema.safeParse(value);
    if (result.success) return { ok: true, value: result.data };
    const problems = result.error.issues.map(
      (issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`,
    );
    return { ok: false, message: problems.join('; ') };
  }
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
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
