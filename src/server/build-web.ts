import { copyFile, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessError } from '../index.ts';

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the UI sources and the built UI live in this package. */
export const webPaths = {
  source: join(packageRoot, 'web', 'src'),
  dist: join(packageRoot, 'web', 'dist'),
} as const;

/** Options of `buildWeb`. */
export interface BuildWebOptions {
  /** Rebuild even when the output is newer than every source. */
  force?: boolean;
  sourceDir?: string;
  outDir?: string;
  /** Minify the bundle (default true). */
  minify?: boolean;
}

/** What `buildWeb` did. */
export interface BuildWebResult {
  built: boolean;
  outDir: string;
}

/**
 * Bundles `web/src` into `web/dist` with esbuild (Preact JSX, CSS, no CDN) when the output is missing or
 * older than a source file; returns without work otherwise.
 */
export async function buildWeb(options: BuildWebOptions = {}): Promise<BuildWebResult> {
  const sourceDir = options.sourceDir ?? webPaths.source;
  const outDir = options.outDir ?? webPaths.dist;
  const stamp = join(outDir, '.build-stamp');
  if (options.force !== true) {
    const [built, newest, shared] = await Promise.all([
      mtimeOf(stamp),
      newestMtime(sourceDir),
      newestSharedInput(stamp),
    ]);
    if (built !== undefined && built >= newest && built >= shared) return { built: false, outDir };
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    throw new HarnessError(
      'WEB_BUILD_UNAVAILABLE',
      'building the Web UI needs esbuild (a dev dependency): run `npm install` in the Rein checkout',
      { cause: error },
    );
  }
  await mkdir(outDir, { recursive: true });
  let inputs: string[];
  try {
    const result = await esbuild.build({
      entryPoints: { app: join(sourceDir, 'main.tsx') },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      minify: options.minify ?? true,
      sourcemap: false,
      legalComments: 'none',
      outdir: outDir,
      logLevel: 'silent',
      define: { 'process.env.NODE_ENV': '"production"' },
      metafile: true,
    });
    // The UI bundles browser-safe SDK modules too (the transcript fold): their changes must rebuild it.
    inputs = Object.keys(result.metafile.inputs).map((input) => resolve(input));
  } catch (error) {
    throw new HarnessError('WEB_BUILD_FAILED', `the Web UI failed to build: ${String(error)}`, {
      cause: error,
    });
  }
  await copyFile(join(sourceDir, 'index.html'), join(outDir, 'index.html'));
  const shared = inputs.filter((input) => !input.startsWith(sourceDir) && !input.includes('node_modules'));
  await writeFile(stamp, `${JSON.stringify({ builtAt: new Date().toISOString(), shared })}\n`);
  return { built: true, outDir };
}

async function mtimeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    // Missing output simply means "not built yet".
    return undefined;
  }
}

/** The newest mtime of the bundled files outside the UI sources the stamp lists (Infinity if one is gone). */
async function newestSharedInput(stamp: string): Promise<number> {
  let shared: unknown;
  try {
    shared = (JSON.parse(await readFile(stamp, 'utf8')) as { shared?: unknown }).shared;
  } catch {
    // A missing or old-style stamp lists nothing: the source tree's mtimes decide alone.
    return 0;
  }
  if (!Array.isArray(shared)) return 0;
  let newest = 0;
  for (const path of shared) {
    const time = typeof path === 'string' ? await mtimeOf(path) : undefined;
    if (time === undefined) return Number.POSITIVE_INFINITY;
    if (time > newest) newest = time;
  }
  return newest;
}

async function newestMtime(directory: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    const time = entry.isDirectory() ? await newestMtime(path) : ((await mtimeOf(path)) ?? 0);
    if (time > newest) newest = time;
  }
  return newest;
}
