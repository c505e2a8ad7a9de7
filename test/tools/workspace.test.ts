import { mkdirSync, rmdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError, Workspace, canonicalPath, isWithin, runWithPathGrant } from '../../src/internal.ts';
import type { Sandbox } from './support.ts';
import { sandbox } from './support.ts';

let box: Sandbox;
let workspace: Workspace;
beforeEach(() => {
  box = sandbox('rein-workspace-');
  workspace = new Workspace({ root: box.workspace, reinHome: join(box.reinHome, 'not-created-yet') });
});
afterEach(() => box.cleanup());

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error instanceof ToolError ? error.code : 'not a ToolError';
  }
}

describe('Workspace', () => {
  it('compares with a separator-aware prefix check', () => {
    expect(isWithin('/a/b', '/a/b')).toBe(true);
    expect(isWithin('/a/b', '/a/b/c')).toBe(true);
    expect(isWithin('/a/b', '/a/bc')).toBe(false);
    expect(isWithin('/', '/anything')).toBe(true);
  });

  it('follows symlinks segment by segment, including dangling ones and missing tails', () => {
    mkdirSync(join(box.workspace, 'real'));
    symlinkSync(join(box.workspace, 'real'), join(box.workspace, 'alias'));
    symlinkSync(join(box.outside, 'later/file.txt'), join(box.workspace, 'dangling'));
    expect(canonicalPath(`${box.workspace}/alias/new/deeper.txt`)).toBe(
      join(box.workspace, 'real/new/deeper.txt'),
    );
    expect(canonicalPath(`${box.workspace}/dangling`)).toBe(join(box.outside, 'later/file.txt'));
    expect(canonicalPath(`${box.workspace}/alias/../real/./x`)).toBe(join(box.workspace, 'real/x'));
    symlinkSync('loop-b', join(box.workspace, 'loop-a'));
    symlinkSync('loop-a', join(box.workspace, 'loop-b'));
    expect(codeOf(() => canonicalPath(`${box.workspace}/loop-a`))).toBe('PATH_UNRESOLVABLE');
  });

  it('classifies zones and protects .git/ and Rein home even for files that do not exist yet', () => {
    expect(workspace.resolve('src/new.ts')).toMatchObject({ zone: 'inside', display: 'src/new.ts' });
    expect(workspace.resolve('.git/objects/new')).toMatchObject({ zone: 'git-internals' });
    expect(workspace.resolve('sub/.git/config')).toMatchObject({ zone: 'git-internals' });
    expect(workspace.resolve(join(box.reinHome, 'not-created-yet/sessions/x.jsonl'))).toMatchObject({
      zone: 'rein-home',
    });
    expect(workspace.resolve(join(box.reinHome, 'not-created-yet/tool-output/1.txt'))).toMatchObject({
      zone: 'tool-output',
    });
    expect(codeOf(() => workspace.check('.git/objects/new', 'write'))).toBe('PATH_PROTECTED');
    expect(codeOf(() => workspace.check('.git/HEAD', 'read'))).toBeUndefined();
    expect(codeOf(() => workspace.check(join(box.reinHome, 'not-created-yet/config.json'), 'read'))).toBe(
      'PATH_PROTECTED',
    );
    expect(
      codeOf(() => workspace.check(join(box.reinHome, 'not-created-yet/tool-output/1.txt'), 'read')),
    ).toBeUndefined();
    expect(
      codeOf(() => workspace.check(join(box.reinHome, 'not-created-yet/tool-output/1.txt'), 'write')),
    ).toBe('PATH_PROTECTED');
    expect(codeOf(() => workspace.check('a\0b', 'read'))).toBe('INVALID_PATH');
    expect(codeOf(() => workspace.check('', 'read'))).toBe('INVALID_PATH');
  });

  it('lets outside paths through only under a grant, and rechecks just before acting', () => {
    const outsideFile = join(box.outside, 'data.txt');
    expect(codeOf(() => workspace.check(outsideFile, 'read'))).toBe('PATH_OUTSIDE_WORKSPACE');
    const readGrant = { read: [box.outside], write: [] };
    expect(
      runWithPathGrant(readGrant, () => codeOf(() => workspace.check(outsideFile, 'read'))),
    ).toBeUndefined();
    expect(runWithPathGrant(readGrant, () => codeOf(() => workspace.check(outsideFile, 'write')))).toBe(
      'PATH_OUTSIDE_WORKSPACE',
    );
    expect(
      runWithPathGrant({ read: [], write: [outsideFile] }, () =>
        codeOf(() => workspace.check(outsideFile, 'read')),
      ),
    ).toBeUndefined();
    mkdirSync(join(box.workspace, 'dir'));
    const checked = workspace.check('dir/file.txt', 'write');
    // The directory is swapped for a link out of the workspace between the check and the operation.
    rmdirSync(join(box.workspace, 'dir'));
    symlinkSync(box.outside, join(box.workspace, 'dir'));
    expect(codeOf(() => workspace.recheck(checked, 'write'))).toBe('PATH_OUTSIDE_WORKSPACE');
    // Under a grant the new target passes the zone check, but it is not the path that was decided on.
    expect(
      runWithPathGrant({ read: [], write: [box.outside] }, () =>
        codeOf(() => workspace.recheck(checked, 'write')),
      ),
    ).toBe('PATH_CHANGED');
    expect(() => new Workspace({ root: join(box.base, 'missing') })).toThrow(/does not exist/);
  });
});
