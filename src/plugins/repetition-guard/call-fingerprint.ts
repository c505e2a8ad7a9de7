import { createHash } from 'node:crypto';

/** A stable fingerprint of a tool call: its name plus a hash of its canonical arguments. */
export function callFingerprint(name: string, rawArguments: string): string {
  const digest = createHash('sha256').update(canonicalArguments(rawArguments)).digest('hex');
  return `${name}:${digest.slice(0, 16)}`;
}

/**
 * The arguments as canonical JSON (object keys sorted at every level, no insignificant whitespace), so
 * `{"a":1,"b":2}` and `{ "b": 2, "a": 1 }` match; text that is not JSON is used verbatim.
 */
export function canonicalArguments(rawArguments: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawArguments);
  } catch {
    // Unparseable arguments still repeat identically; their raw text is their identity.
    return rawArguments;
  }
  return JSON.stringify(sortKeys(parsed));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort())
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}
