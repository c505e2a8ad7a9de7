import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/index.ts';
import { builtinTools } from '../../src/index.ts';
import type { Sandbox } from './support.ts';
import { sandbox, writeFiles } from './support.ts';

let box: Sandbox;
let tools: Map<string, Tool>;

beforeEach(() => {
  box = sandbox();
  tools = new Map(
    builtinTools({ workspace: box.workspace, reinHome: box.reinHome }).map((tool) => [
      tool.name,
      tool as Tool,
    ]),
  );
  writeFiles(box.workspace, { 'notes.md': '# Notes\n\n- one\n- two\n' });
});

afterEach(() => box.cleanup());

function preview(name: string, args: unknown): ReturnType<NonNullable<Tool['preview']>> {
  return tools.get(name)!.preview!(args);
}

describe('tool previews (what a call would change, for approvals)', () => {
  it('write_file: the diff against the current file, and nothing is written', () => {
    const shown = preview('write_file', { path: 'notes.md', content: '# Notes\n\n- one\n- three\n' });
    expect(shown?.path).toBe('notes.md');
    expect(shown?.diff).toContain('-- two');
    expect(shown?.diff).toContain('+- three');
    expect(shown?.note).toBeUndefined();
    expect(readFileSync(join(box.workspace, 'notes.md'), 'utf8')).toBe('# Notes\n\n- one\n- two\n');
  });

  it('write_file: a new file is all added lines', () => {
    const shown = preview('write_file', { path: 'new.txt', content: 'hello\n' });
    expect(shown?.diff).toContain('+hello');
    expect(shown?.diff).not.toMatch(/^-[^-]/m);
  });

  it('write_file outside the workspace: the new content, with a note that the old is not shown', () => {
    const shown = preview('write_file', { path: join(box.outside, 'secret.txt'), content: 'x\n' });
    expect(shown?.diff).toContain('+x');
    expect(shown?.note).toMatch(/^the current content is not shown: /);
  });

  it('edit_file: the diff of the replacement; a text that is not there says the edit would fail', () => {
    const shown = preview('edit_file', { path: 'notes.md', old_string: '- two\n', new_string: '- 2\n' });
    expect(shown?.diff).toContain('-- two');
    expect(shown?.diff).toContain('+- 2');
    expect(preview('edit_file', { path: 'notes.md', old_string: 'absent', new_string: 'x' })).toEqual({
      path: 'notes.md',
      note: 'old_string is not in the file; the edit would fail',
    });
    expect(readFileSync(join(box.workspace, 'notes.md'), 'utf8')).toBe('# Notes\n\n- one\n- two\n');
  });
});
