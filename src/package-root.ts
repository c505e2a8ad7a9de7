import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The directory of Rein's own `package.json`, found upward from this module, so that it holds both for the
 * sources (`src/`, run through tsx) and for the bundle (`dist/`, also inside `node_modules/rein`).
 */
export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    directory = parent;
  }
  cached = directory;
  return directory;
}

/** Rein's version from its `package.json`, or `unknown` when the file cannot be read. */
export function packageVersion(): string {
  try {
    const text = readFileSync(join(packageRoot(), 'package.json'), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? 'unknown';
  } catch {
    // A missing or unreadable package.json (an unusual install) only loses the version number.
    return 'unknown';
  }
}
