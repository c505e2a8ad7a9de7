import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const child = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/session/dead-writer-child.ts');

/** What the dead writer saw: events deferred at its open (a snapshot's prefix), and its log's length. */
export interface DeadWriterReport {
  deferredEvents: number;
  length: number;
}

/**
 * Leaves disk session `id` under `root` as a writer process that died before its release leaves it: a
 * child opens it, appends one turn (`open-tool`: cut off while running tools; `text`: a completed text
 * turn whose prompt is "Third question"), hands it to the OS and is SIGKILLed holding the lock. Throws
 * unless the child reported and then died of that signal.
 */
export function writeTurnThenDie(
  root: string,
  id: string,
  turn: 'open-tool' | 'text' = 'open-tool',
): DeadWriterReport {
  const result = spawnSync(process.execPath, ['--import', 'tsx', child, root, id, turn], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  const report = result.stdout.trim();
  if (result.signal !== 'SIGKILL' || report === '')
    throw new Error(
      `the writer child did not report and die by SIGKILL (status ${result.status}, signal ${result.signal}): ${result.stderr}`,
    );
  return JSON.parse(report) as DeadWriterReport;
}
