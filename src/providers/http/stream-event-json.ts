import { LlmError } from '../../llm/index.ts';

/** An `INVALID_RESPONSE` failure for a stream that breaks its wire format. */
export function malformedStream(provider: string, detail: string): LlmError {
  return new LlmError({ code: 'INVALID_RESPONSE', message: `${provider}: malformed stream: ${detail}` });
}

/** Parses one SSE event's data as a JSON object; anything else is a typed `INVALID_RESPONSE`. */
export function parseStreamEventJson<Shape extends object>(data: string, provider: string): Shape {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw malformedStream(provider, `an event is not JSON: ${data.slice(0, 120)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformedStream(provider, 'an event is not a JSON object');
  }
  return value as Shape;
}
