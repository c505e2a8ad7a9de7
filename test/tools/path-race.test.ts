import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from './support.ts';
import { run, sandbox, textOf, toolsOf } from './support.ts';

const secret = 'OUTSIDE-SECRET';
let box: Sandbox;

// Every path, mode, size and byte below the outside directory.
function fingerprint(directory: string): string {
  const hash = createHash('sha256');
  const visit = (path: string): void => {
    const info = statSync(path);
    hash.update(`${path}:${info.mode}:${info.size}:${info.nlink}\n`);
    if (info.isDirectory()) for (const name of readdirSync(path).sort()) visit(join(path, name));
    else hash.update(readFileSync(path));
  };
  visit(directory);
  return hash.digest('hex');
}

// Swaps ws/d between a real directory and a symlink to outside/d as fast as it can, until killed.
const flipperSource = `
const { renameSync, writeSync } = require('node:fs');
const ws = process.argv[1];
let flips = 0;
let strays = 0;
process.on('SIGTERM', () => { writeSync(1, String(flips)); process.exit(0); });
// A write may create d/ in the instant it is missing: move that aside so the swapping goes on.
const into = (from) => {
  try { renameSync(ws + '/' + from, ws + '/d'); return true; } catch {}
  try { renameSync(ws + '/d', ws + '/stray-' + strays++); } catch {}
  return false;
};
const back = (to) => { try { renameSync(ws + '/d', ws + '/' + to); } catch {} };
// Bursts of swaps, with a turn of the event loop between them so SIGTERM is seen.
const burst = () => {
  for (let index = 0; index < 500; index++) {
    if (into('real')) { back('real'); flips++; }
    if (into('link')) { back('link'); flips++; }
  }
  setImmediate(burst);
};
burst();
`;

beforeAll(() => {
  box = sandbox('rein-race-');
  mkdirSync(join(box.outside, 'd'));
  writeFileSync(join(box.outside, 'd/f.txt'), `${secret} line\n`);
  mkdirSync(join(box.workspace, 'real'));
  writeFileSync(join(box.workspace, 'real/f.txt'), 'inside line\n');
  symlinkSync(join(box.outside, 'd'), join(box.workspace, 'link'));
});

afterAll(() => box.cleanup());

describe('confinement under a race', () => {
  it('a flipper swapping a workspace directory for a symlink to outside gets zero bytes in or out', async () => {
    const tools = toolsOf(box);
    const before = fingerprint(box.outside);
    const flipper = spawn(process.execPath, ['-e', flipperSource, box.workspace], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let flips = '';
    flipper.stdout.on('data', (chunk: Buffer) => (flips += chunk.toString()));
    const calls: { name: string; args: Record<string, unknown> }[] = [];
    for (let index = 0; index < 250; index++) {
      calls.push(
        { name: 'read_file', args: { path: 'd/f.txt' } },
        { name: 'write_file', args: { path: `d/w-${index}.txt`, content: `written ${index}\n` } },
        {
          name: 'edit_file',
          args:
            index % 2 === 0
              ? { path: 'd/f.txt', old_string: 'line', new_string: 'LINE' }
              : { path: 'd/f.txt', old_string: 'LINE', new_string: 'line' },
        },
        { name: 'list_dir', args: { path: 'd' } },
        { name: 'grep', args: { pattern: 'line|LINE', path: 'd', ignore_case: true } },
        { name: 'glob', args: { pattern: '**/*', path: 'd' } },
      );
    }
    const outcomes: { name: string; text: string; code?: string }[] = [];
    try {
      // Give the flipper a head start so every call meets the race.
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (let start = 0; start < calls.length; start += 30) {
        const batch = calls.slice(start, start + 30);
        const results = await Promise.all(batch.map((call) => run(tools[call.name], call.args)));
        for (const [index, result] of results.entries()) {
          outcomes.push({
            name: batch[index]!.name,
            text: textOf(result.output) + (result.error?.message ?? ''),
            ...(result.error?.code !== undefined ? { code: result.error.code } : {}),
          });
        }
      }
    } finally {
      flipper.kill('SIGTERM');
      await new Promise((resolve) => flipper.once('exit', resolve));
    }
    expect(outcomes).toHaveLength(1500);
    // The race really ran: the flipper swapped thousands of times, and both sides were seen.
    expect(Number(flips)).toBeGreaterThan(1000);
    expect(outcomes.some((outcome) => outcome.code === undefined)).toBe(true);
    expect(outcomes.some((outcome) => outcome.code !== undefined)).toBe(true);
    for (const outcome of outcomes) expect(outcome.text, outcome.name).not.toContain(secret);
    // Nothing outside changed: no file written, none edited, none created.
    expect(fingerprint(box.outside)).toBe(before);
    expect(readdirSync(join(box.outside, 'd'))).toEqual(['f.txt']);
    expect(readFileSync(join(box.outside, 'd/f.txt'), 'utf8')).toBe(`${secret} line\n`);
    // What was written landed inside, and no temporary file was left behind.
    const inside = readdirSync(box.workspace, { recursive: true, encoding: 'utf8' });
    expect(inside.filter((name) => name.endsWith('.rein-tmp'))).toEqual([]);
    expect(inside.some((name) => /(^|\/)w-\d+\.txt$/.test(name))).toBe(true);
  }, 120_000);
});
