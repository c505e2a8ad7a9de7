// Spawns one benchmark cell (bench/cell.ts) in a fresh `node --expose-gc` process and parses its result.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = dirname(benchDir);

/** One cell's numbers. */
export type Cell = Record<string, number | boolean | string>;
/** A cell's outcome: its numbers, or why it failed. */
export type Outcome = { ok: true; cell: Cell } | { ok: false; error: string };

/** Runs one cell in a fresh process and parses its `CELL` line. */
export function runCell(
  subject: string,
  workload: string,
  param: string,
  timeoutMs = 300_000,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', join(benchDir, 'cell.ts'), subject, workload, param],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, OPENAI_AGENTS_DISABLE_TRACING: '1' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((text) => text.startsWith('CELL '));
      if (code === 0 && line !== undefined) {
        resolve({ ok: true, cell: JSON.parse(line.slice(5)) as Cell });
        return;
      }
      const reason = signal === 'SIGKILL' ? `timeout after ${timeoutMs / 1000} s` : firstErrorLine(stderr);
      resolve({ ok: false, error: reason });
    });
  });
}

function firstErrorLine(stderr: string): string {
  return (
    stderr
      .split('\n')
      .find((line) => /error/i.test(line))
      ?.trim()
      .slice(0, 160) ?? 'failed'
  );
}
