// Vitest global setup: rebuilds the compiled CLI (dist/, JavaScript and the Web UI, about a second) before
// any test runs, so the tests that spawn bin/rein.js always run the sources as they are now.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** Builds dist/ once per Vitest run; a failed build fails the run with the build's own output. */
export default function setup(): void {
  const root = resolve(import.meta.dirname, '..', '..');
  const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--js'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (build.status !== 0) {
    throw new Error(
      `npm run build:js failed (${build.status ?? build.signal}):\n${build.stdout}${build.stderr}`,
    );
  }
}
