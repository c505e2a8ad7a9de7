import { copyFile, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HarnessError } from '../index.ts';
import { webPaths } from './web-paths.ts';

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
 * Bundles `web/src` into `dist/web` with esbuild (Preact JSX, CSS, no CDN) when the output is missing or
 * older than a source file; returns without work otherwise.
 */
export async function buildWeb(options: BuildWebOptions = {}): Promise<BuildWebResult> {
  const sourceDir = options.sourceDir ?? webPaths.source;
  const outDir = options.outDir ?? webPaths.dist;
  const stamp = join(outDir, '.build-stamp');
  if (options.force !== true) {
    const [built, newest] = await Promise.all([mtimeOf(stamp), newestMtime(sourceDir)]);
    if (built !== undefined && built >= newest) return { built: false, outDir };
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
  try {
    await esbuild.build({
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
    });
  } catch (error) {
    throw new HarnessError('WEB_BUILD_FAILED', `the Web UI failed to build: ${String(error)}`, {
      cause: error,
    });
  }
  await copyFile(join(sourceDir, 'index.html'), join(outDir, 'index.html'));
  await writeFile(stamp, `${new Date().toISOString()}\n`);
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

async function newestMtime(directory: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    const time = entry.isDirectory() ? await newestMtime(path) : ((await mtimeOf(path)) ?? 0);
    if (time > newest) newest = time;
  }
  return newest;
}
