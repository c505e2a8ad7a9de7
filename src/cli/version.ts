import { readFileSync } from 'node:fs';

/** Rein's version from its package.json, or `unknown` when that cannot be read. */
export function reinVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? 'unknown';
  } catch {
    // A missing package.json (an unusual install) only loses the version number.
    return 'unknown';
  }
}
