import { mkdtemp, readFile, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildWeb } from '../../src/server/index.ts';

describe('building the Web UI', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('rebuilds when an SDK module the UI bundles (the transcript fold) changes, not otherwise', async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'rein-web-build-'));
    dirs.push(outDir);
    expect(await buildWeb({ outDir, minify: false })).toEqual({ built: true, outDir });
    expect(await buildWeb({ outDir, minify: false })).toEqual({ built: false, outDir });
    const stamp = JSON.parse(await readFile(join(outDir, '.build-stamp'), 'utf8')) as { shared: string[] };
    const fold = resolve(import.meta.dirname, '../../src/transcript/transcript.ts');
    expect(stamp.shared).toContain(fold);
    const before = await stat(fold);
    const later = new Date(Date.now() + 60_000);
    try {
      await utimes(fold, later, later);
      expect(await buildWeb({ outDir, minify: false })).toEqual({ built: true, outDir });
    } finally {
      await utimes(fold, before.atime, before.mtime);
    }
  }, 60_000);
});
