import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSubcommands } from '../../src/cli/config-command.ts';
import { commandSpecs } from '../../src/cli/command-specs.ts';
import { runRein } from './rein-process.ts';

const root = resolve(import.meta.dirname, '../..');

function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.(ts|tsx)$/.test(name)) files.push(path);
  }
  return files;
}

interface Hint {
  file: string;
  text: string;
  command: string;
  subcommand: string | undefined;
}

// A hint is `rein <command>` where it is offered to the user: at the start of a string or code span, or
// after "run", "with:", "try"… — not prose such as "otherwise rein prints the limit".
const hintPattern =
  /(?:^|[`'"(]|:\s|\b(?:run|Run|with|try|use|Try|Use)\s+)rein ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/gm;

function hintsIn(files: readonly string[]): Hint[] {
  const hints: Hint[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(hintPattern)) {
      hints.push({ file: relative(root, file), text: match[0], command: match[1]!, subcommand: match[2] });
    }
  }
  return hints;
}

const hints = hintsIn([...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'web/src'))]);
const commands = new Set([...commandSpecs.map((spec) => spec.name), 'help']);

describe('every `rein …` hint Rein prints names a command that exists', () => {
  it('finds the hints (the config set-key hint among them)', () => {
    expect(hints.length).toBeGreaterThan(20);
    expect(hints.some((hint) => hint.command === 'config' && hint.subcommand === 'set-key')).toBe(true);
  });

  it('each names a known command, and each config hint a known subcommand', () => {
    const wrong = hints.filter(
      (hint) =>
        !commands.has(hint.command) ||
        (hint.command === 'config' &&
          hint.subcommand !== undefined &&
          !(configSubcommands as readonly string[]).includes(hint.subcommand)),
    );
    expect(wrong).toEqual([]);
  });

  it('the real binary accepts each hinted command (its --help exits 0)', async () => {
    const named = [...new Set(hints.map((hint) => hint.command))].filter((command) => command !== 'help');
    for (const command of named) {
      const result = await runRein([command, '--help'], { cwd: root });
      expect({ command, code: result.code, stderr: result.stderr }).toEqual({ command, code: 0, stderr: '' });
    }
  }, 120_000);
});
