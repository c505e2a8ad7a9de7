// Which build of Rein the benchmark cells run. By default the built package in dist/ — the JavaScript
// `npm install` gives users, as every peer is measured from its published JavaScript. The sources
// through tsx (REIN_BENCH_SOURCE=src) carry esbuild's `keepNames` wrappers, which tsx adds to every
// function and which cost extra compilation the package does not have (bench/README.md, "Which Rein").
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

type ReinIndex = typeof import('../src/index.ts');
type ReinTesting = typeof import('../src/testing/index.ts');

/** The build the cells run: `dist` (the package, default) or `src` (the TypeScript sources via tsx). */
export const reinSource: 'dist' | 'src' = process.env.REIN_BENCH_SOURCE === 'src' ? 'src' : 'dist';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Throws when a source file is newer than the built package, so a stale dist/ is never measured. */
function assertBuildFresh(): void {
  const built = join(root, 'dist', 'index.js');
  let builtAt: number;
  try {
    builtAt = statSync(built).mtimeMs;
  } catch {
    throw new Error(`bench: ${built} is missing; run \`npm run build:js\` (or set REIN_BENCH_SOURCE=src)`);
  }
  const pending = [join(root, 'src')];
  while (pending.length > 0) {
    const directory = pending.pop()!;
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (statSync(path).mtimeMs > builtAt)
        throw new Error(`bench: ${path} is newer than dist/; run \`npm run build:js\` first`);
    }
  }
}

async function load(): Promise<{ index: ReinIndex; testing: ReinTesting }> {
  if (reinSource === 'src')
    return { index: await import('../src/index.ts'), testing: await import('../src/testing/index.ts') };
  assertBuildFresh();
  // Computed specifiers: dist/ has no declarations beside its files, and its API is the sources'.
  const index = (await import(new URL('../dist/index.js', import.meta.url).href)) as ReinIndex;
  const testing = (await import(new URL('../dist/testing.js', import.meta.url).href)) as ReinTesting;
  return { index, testing };
}

/** The Rein SDK (`rein`) and its test kit (`rein/testing`), from the build `reinSource` names. */
export const { index: rein, testing: reinTesting } = await load();
