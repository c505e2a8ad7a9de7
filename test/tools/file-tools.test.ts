import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { validateToolArguments } from '../../src/internal.ts';
import type { Sandbox } from './support.ts';
import { metaOf, run, sandbox, textOf, toolsOf, writeFiles } from './support.ts';

let box: Sandbox;
let tools: Record<string, Tool>;

beforeEach(() => {
  box = sandbox();
  tools = toolsOf(box);
});
afterEach(() => box.cleanup());

describe('read_file', () => {
  it('shows numbered lines, pages with offset/limit and says how to continue', async () => {
    writeFiles(box.workspace, { 'src/a.ts': 'one\ntwo\r\nthree\nfour\n' });
    const whole = await run(tools.read_file, { path: 'src/a.ts' });
    expect(textOf(whole.output)).toBe('     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour');
    expect(metaOf(whole.output)).toEqual({ path: 'src/a.ts', bytes: 20, startLine: 1, endLine: 4 });
    const page = await run(tools.read_file, { path: 'src/a.ts', offset: 2, limit: 2 });
    expect(textOf(page.output)).toBe(
      '     2\ttwo\n     3\tthree\n(showing lines 2-3 of a 20-byte file; the limit of 2 lines. Continue with offset=4.)',
    );
    const past = await run(tools.read_file, { path: 'src/a.ts', offset: 9 });
    expect(textOf(past.output)).toBe('src/a.ts has 4 lines; offset 9 is past the end.');
  });

  it('cuts overlong lines and stops at the output cap', async () => {
    writeFiles(box.workspace, { 'long.txt': `${'x'.repeat(5000)}\n${'y\n'.repeat(50_000)}` });
    const result = await run(tools.read_file, { path: 'long.txt' });
    const text = textOf(result.output);
    expect(text).toContain('[line cut; the whole line is 5000 bytes]');
    expect(text).toMatch(/the limit of 2000 lines\. Continue with offset=2001\.\)$/);
    const capped = await run(toolsOf(box, { outputLimit: { maxBytes: 2000 } }).read_file, {
      path: 'long.txt',
      offset: 2,
    });
    expect(Buffer.byteLength(textOf(capped.output))).toBeLessThanOrEqual(2000);
    expect(textOf(capped.output)).toContain('the output cap was reached');
  });

  it('refuses binary files, directories and missing files with coded errors', async () => {
    writeFiles(box.workspace, { 'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]) });
    mkdirSync(join(box.workspace, 'dir'));
    expect((await run(tools.read_file, { path: 'image.png' })).error).toMatchObject({ code: 'BINARY_FILE' });
    expect((await run(tools.read_file, { path: 'dir' })).error).toMatchObject({ code: 'IS_A_DIRECTORY' });
    expect((await run(tools.read_file, { path: 'missing.txt' })).error).toEqual({
      code: 'FILE_NOT_FOUND',
      message: 'missing.txt does not exist',
    });
    writeFiles(box.workspace, { 'empty.txt': '' });
    expect(textOf((await run(tools.read_file, { path: 'empty.txt' })).output)).toBe('empty.txt is empty.');
  });

  it('never blocks on a FIFO: read, write, edit and grep refuse it at once', async () => {
    execFileSync('mkfifo', [join(box.workspace, 'pipe')]);
    expect((await run(tools.read_file, { path: 'pipe' })).error).toMatchObject({ code: 'NOT_A_FILE' });
    expect((await run(tools.write_file, { path: 'pipe', content: 'x' })).error).toMatchObject({
      code: 'NOT_A_FILE',
    });
    expect(
      (await run(tools.edit_file, { path: 'pipe', old_string: 'a', new_string: 'b' })).error,
    ).toMatchObject({
      code: 'NOT_A_FILE',
    });
    expect(textOf((await run(tools.grep, { pattern: 'x', path: 'pipe' })).output)).toContain(
      '1 binary, unreadable or over-size files skipped',
    );
  });

  it('names the bad field of wrongly typed or missing arguments', () => {
    expect(validateToolArguments(tools.read_file!, { path: 3 })).toEqual({
      ok: false,
      message: 'path: must be string',
    });
    expect(validateToolArguments(tools.read_file!, {})).toMatchObject({
      ok: false,
      message: expect.stringContaining('path'),
    });
    expect(validateToolArguments(tools.edit_file!, { path: 'a', old_string: 'x' })).toMatchObject({
      ok: false,
      message: expect.stringContaining('new_string'),
    });
    expect(validateToolArguments(tools.bash!, { command: 'ls', timeout_ms: 'soon' })).toMatchObject({
      ok: false,
      message: expect.stringContaining('timeout_ms'),
    });
  });
});

describe('write_file', () => {
  it('creates files with their parent directories and overwrites with a diff in meta', async () => {
    const created = await run(tools.write_file, { path: 'deep/er/new.txt', content: 'a\nb\n' });
    expect(textOf(created.output)).toBe('Created deep/er/new.txt (2 lines, 4 bytes).');
    expect(readFileSync(join(box.workspace, 'deep/er/new.txt'), 'utf8')).toBe('a\nb\n');
    const again = await run(tools.write_file, { path: 'deep/er/new.txt', content: 'a\nc\n' });
    expect(textOf(again.output)).toBe('Overwrote deep/er/new.txt (2 lines, 4 bytes).');
    const meta = metaOf<{ created: boolean; diff: string }>(again.output);
    expect(meta.created).toBe(false);
    expect(meta.diff).toContain('-b\n+c\n');
  });

  it('refuses to write over a directory or into .git, and through a symlink out of the workspace', async () => {
    mkdirSync(join(box.workspace, 'dir'));
    expect((await run(tools.write_file, { path: 'dir', content: 'x' })).error).toMatchObject({
      code: 'IS_A_DIRECTORY',
    });
    mkdirSync(join(box.workspace, '.git'));
    expect(
      (await run(tools.write_file, { path: '.git/hooks/pre-commit', content: 'x' })).error,
    ).toMatchObject({
      code: 'PATH_PROTECTED',
    });
    expect(existsSync(join(box.workspace, '.git/hooks'))).toBe(false);
    symlinkSync(join(box.outside, 'planted.txt'), join(box.workspace, 'dangling'));
    expect((await run(tools.write_file, { path: 'dangling', content: 'x' })).error).toMatchObject({
      code: 'PATH_OUTSIDE_WORKSPACE',
    });
    expect(existsSync(join(box.outside, 'planted.txt'))).toBe(false);
  });
});

describe('edit_file', () => {
  it('replaces exactly one match and returns the unified diff', async () => {
    writeFiles(box.workspace, { 'a.ts': 'const a = 1;\nconst b = 2;\n' });
    const result = await run(tools.edit_file, {
      path: 'a.ts',
      old_string: 'const b = 2;',
      new_string: 'const b = $&3;',
    });
    expect(readFileSync(join(box.workspace, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = $&3;\n');
    expect(textOf(result.output)).toBe(
      'Edited a.ts: 1 replacement.\n--- a.ts\n+++ a.ts\n@@ -1,2 +1,2 @@\n const a = 1;\n-const b = 2;\n+const b = $&3;\n',
    );
    expect(metaOf<{ replacements: number; diff: string }>(result.output)).toMatchObject({
      replacements: 1,
      diff: expect.stringContaining('@@ -1,2 +1,2 @@'),
    });
  });

  it('refuses a non-unique match unless replace_all, and reports a missing match', async () => {
    writeFiles(box.workspace, { 'a.ts': 'x = 1;\nx = 1;\n' });
    const ambiguous = await run(tools.edit_file, {
      path: 'a.ts',
      old_string: 'x = 1;',
      new_string: 'x = 2;',
    });
    expect(ambiguous.error).toMatchObject({
      code: 'AMBIGUOUS_MATCH',
      message: expect.stringContaining('matches 2 places'),
    });
    expect(readFileSync(join(box.workspace, 'a.ts'), 'utf8')).toBe('x = 1;\nx = 1;\n');
    const all = await run(tools.edit_file, {
      path: 'a.ts',
      old_string: 'x = 1;',
      new_string: 'x = 2;',
      replace_all: true,
    });
    expect(textOf(all.output)).toMatch(/^Edited a\.ts: 2 replacements\./);
    expect(readFileSync(join(box.workspace, 'a.ts'), 'utf8')).toBe('x = 2;\nx = 2;\n');
    expect(
      (await run(tools.edit_file, { path: 'a.ts', old_string: 'nope', new_string: 'y' })).error,
    ).toMatchObject({
      code: 'NO_MATCH',
    });
    expect(
      (await run(tools.edit_file, { path: 'a.ts', old_string: 'x', new_string: 'x' })).error,
    ).toMatchObject({
      code: 'NO_CHANGE',
    });
    expect(
      (await run(tools.edit_file, { path: 'gone.ts', old_string: 'x', new_string: 'y' })).error,
    ).toMatchObject({
      code: 'FILE_NOT_FOUND',
    });
    writeFiles(box.workspace, { 'blob.bin': Buffer.from([1, 0, 2]) });
    expect(
      (await run(tools.edit_file, { path: 'blob.bin', old_string: 'x', new_string: 'y' })).error,
    ).toMatchObject({
      code: 'BINARY_FILE',
    });
  });
});

describe('list_dir, glob and grep', () => {
  beforeEach(() => {
    writeFiles(box.workspace, {
      '.gitignore': 'dist/\n*.log\n',
      'src/main.ts': 'export const answer = 42;\n',
      'src/util/strings.ts': 'export function shout(s: string) {\n  return s.toUpperCase();\n}\n',
      'src/.hidden.ts': 'const hidden = 42;\n',
      'src/nested/.gitignore': 'generated.ts\n',
      'src/nested/generated.ts': 'export const answer = 43;\n',
      'dist/main.js': 'export const answer = 42;\n',
      'debug.log': 'answer 42\n',
      '.git/HEAD': 'ref: refs/heads/main\n',
      'README.md': 'The answer is 42.\n',
    });
  });

  it('list_dir marks directories and symlinks', async () => {
    symlinkSync('README.md', join(box.workspace, 'link'));
    const result = await run(tools.list_dir, {});
    expect(textOf(result.output)).toBe(
      './ (7 entries)\n.git/\n.gitignore\nREADME.md\ndebug.log\ndist/\nlink@\nsrc/',
    );
    const sub = await run(tools.list_dir, { path: 'src/util' });
    expect(textOf(sub.output)).toBe('src/util/ (1 entries)\nstrings.ts');
    expect((await run(tools.list_dir, { path: 'README.md' })).error).toMatchObject({
      code: 'NOT_A_DIRECTORY',
    });
    expect((await run(tools.list_dir, { path: 'nowhere' })).error).toMatchObject({ code: 'FILE_NOT_FOUND' });
  });

  it('glob honours every .gitignore and skips .git unless told otherwise', async () => {
    const result = await run(tools.glob, { pattern: '**/*.ts' });
    expect(textOf(result.output)).toBe('src/.hidden.ts\nsrc/main.ts\nsrc/util/strings.ts');
    const everything = await run(tools.glob, { pattern: '**/*', include_ignored: true });
    expect(textOf(everything.output).split('\n')).toEqual([
      '.gitignore',
      'README.md',
      'debug.log',
      'dist/main.js',
      'src/.hidden.ts',
      'src/main.ts',
      'src/nested/.gitignore',
      'src/nested/generated.ts',
      'src/util/strings.ts',
    ]);
    const below = await run(tools.glob, { pattern: '*.ts', path: 'src/nested', include_ignored: false });
    expect(textOf(below.output)).toBe('No files match *.ts in src/nested.');
    expect((await run(tools.glob, { pattern: '*', path: 'README.md' })).error).toMatchObject({
      code: 'NOT_A_DIRECTORY',
    });
  });

  it('grep answers path:line:text, honours ignores, caps results and rejects bad regexes', async () => {
    const result = await run(tools.grep, { pattern: '42' });
    expect(textOf(result.output)).toBe(
      'README.md:1:The answer is 42.\nsrc/.hidden.ts:1:const hidden = 42;\nsrc/main.ts:1:export const answer = 42;',
    );
    const insensitive = await run(tools.grep, { pattern: 'TOUPPERCASE', ignore_case: true, glob: '**/*.ts' });
    expect(textOf(insensitive.output)).toBe('src/util/strings.ts:2:  return s.toUpperCase();');
    const capped = await run(tools.grep, { pattern: 'answer', max_results: 1, include_ignored: true });
    expect(textOf(capped.output)).toBe(
      'README.md:1:The answer is 42.\n(stopped after 1 matches; narrow the pattern, path or glob for the rest)',
    );
    const one = await run(tools.grep, { pattern: 'shout', path: 'src/util/strings.ts' });
    expect(textOf(one.output)).toBe('src/util/strings.ts:1:export function shout(s: string) {');
    expect((await run(tools.grep, { pattern: '(' })).error).toMatchObject({ code: 'INVALID_REGEX' });
    expect(textOf((await run(tools.grep, { pattern: 'zebra' })).output)).toBe(
      'No matches for /zebra/ in . (6 files searched).',
    );
  });

  it('grep searches a repository of 10 000 files', async () => {
    for (let index = 0; index < 50; index++) mkdirSync(join(box.workspace, `pkg${index}`));
    for (let index = 0; index < 10_000; index++) {
      writeFileSync(
        join(box.workspace, `pkg${index % 50}/mod${index}.ts`),
        `export const value${index} = ${index};\n// filler\n`,
      );
    }
    const result = await run(tools.grep, { pattern: 'value9999 ', max_results: 10 });
    expect(textOf(result.output)).toBe('pkg49/mod9999.ts:1:export const value9999 = 9999;');
    expect(metaOf<{ files: number }>(result.output).files).toBe(10_006);
  }, 120_000);
});
