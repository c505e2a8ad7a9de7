// `npm run build`: the package's runnable output in dist/ (docs/architecture-notes.md, "The package", says why).
//
//   node --import tsx scripts/build.ts          # JavaScript, the Web UI and the type declarations
//   node --import tsx scripts/build.ts --js     # JavaScript and the Web UI only (what tests and `npm start` need)
//
// JavaScript: one esbuild pass with code splitting over the three entry points (the SDK, rein/testing and
// the CLI). Every command's module is a dynamic import, so it becomes a chunk of its own that loads only
// when that command runs. Dependencies stay external (they are the package's `dependencies`).
// Types: tsc writes declarations for the two public entry points (`--noCheck`: `npm run typecheck` checks the
// sources; emitting alone is several times faster); their `.ts` import specifiers (the
// sources use `allowImportingTsExtensions`) are rewritten to `.js`, which resolves for every consumer.
import { spawnSync } from 'node:child_process';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { buildWeb } from '../src/server/build-web.ts';

const root = resolve(import.meta.dirname, '..');
const dist = join(root, 'dist');
const jsOnly = process.argv.includes('--js');

/** The entry points of the bundle: output name → source. */
export const entryPoints = {
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  cli: 'src/cli/main.ts',
} as const;

async function buildJavaScript(): Promise<void> {
  // Stale chunks would otherwise pile up (their names carry a content hash).
  await rm(join(dist, 'chunks'), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints,
    outdir: dist,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    sourcesContent: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
}

async function buildTypes(): Promise<void> {
  await rm(join(dist, 'types'), { recursive: true, force: true });
  const tsc = spawnSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  if (tsc.status !== 0) throw new Error(`tsc exited ${tsc.status ?? tsc.signal}`);
  for (const file of await declarationFiles(join(dist, 'types'))) {
    const text = await readFile(file, 'utf8');
    const rewritten = text.replace(
      /((?:from|import|declare module)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g,
      (_match, lead: string, quote: string, path: string) => `${lead}${quote}${path}.js${quote}`,
    );
    if (rewritten !== text) await writeFile(file, rewritten);
  }
}

async function declarationFiles(directory: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...(await declarationFiles(path)));
    else if (entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

const started = performance.now();
await buildJavaScript();
await buildWeb({ outDir: join(dist, 'web') });
if (!jsOnly) await buildTypes();
console.log(
  `built dist/ (${jsOnly ? 'JavaScript and the Web UI' : 'JavaScript, the Web UI and types'}) in ${Math.round(performance.now() - started)} ms`,
);
