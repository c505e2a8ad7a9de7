import { HttpError } from './http-error.ts';

/** The JSON body as an object (absent → empty); anything else is a 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'INVALID_REQUEST', 'the request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** A string field, undefined when absent or null; any other type is a 400. */
export function optionalString(fields: Record<string, unknown>, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, 'INVALID_REQUEST', `${name} must be a string`);
  return value;
}
