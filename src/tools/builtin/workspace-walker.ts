import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import ignore from 'ignore';
import type { Ignore } from 'ignore';
import { ToolError } from '../tool-error.ts';
import type { Workspace } from './workspace.ts';
import { canonicalPath, isWithin } from './workspace.ts';

/** One file found by a walk. */
export interface WalkedFile {
  /** The canonical path of the file. */
  readonly real: string;
  /** The path as shown to the model: relative to the workspace root when inside, else absolute. */
  readonly display: string;
  /** The path relative to the walk's base, with `/` separators (what glob patterns match). */
  readonly relativeToBase: string;
}

/** Options of a walk. */
export interface WalkOptions {
  /** Honour `.gitignore` files (the root's, the base's ancestors' and every nested one). */
  readonly respectGitignore: boolean;
  readonly signal: AbortSignal;
}

interface Matcher {
  readonly directory: string;
  readonly rules: Ignore;
}

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

async function loadGitignore(directory: string): Promise<Matcher | undefined> {
  let text: string;
  try {
    text = await readFile(join(directory, '.gitignore'), 'utf8');
  } catch {
    // No (readable) .gitignore in this directory: nothing to honour here.
    return undefined;
  }
  return { directory, rules: ignore().add(text) };
}

function ignoredBy(matchers: readonly Matcher[], path: string, isDirectory: boolean): boolean {
  for (const matcher of matchers) {
    const rel = toPosix(relative(matcher.directory, path));
    if (rel === '' || rel.startsWith('..')) continue;
    if (matcher.rules.ignores(isDirectory ? `${rel}/` : rel)) return true;
  }
  return false;
}

// Directories met during a walk are real paths (symlinks are not followed), so only their zone matters.
function readable(workspace: Workspace, real: string): boolean {
  try {
    workspace.assertPermitted({ requested: real, real, zone: workspace.zoneOf(real), display: real }, 'read');
    return true;
  } catch {
    // Not readable for this call (e.g. Rein's home below the workspace): the walk leaves it out.
    return false;
  }
}

/**
 * Walks the regular files below a base directory in sorted order: `.git/` is never entered, ignored
 * paths are pruned, symlinked directories are not followed, and a symlinked file is listed only when its
 * target is one the workspace lets this call read (so no outside content leaks through a link).
 */
export async function* walkFiles(
  workspace: Workspace,
  base: string,
  options: WalkOptions,
): AsyncGenerator<WalkedFile> {
  const matchers: Matcher[] = [];
  if (options.respectGitignore && isWithin(workspace.root, base)) {
    // The .gitignore files of the base's ancestors (from the root down) apply to everything below it.
    const parts = relative(workspace.root, base)
      .split(sep)
      .filter((part) => part !== '');
    let directory = workspace.root;
    for (let index = 0; index < parts.length; index++) {
      const matcher = await loadGitignore(directory);
      if (matcher !== undefined) matchers.push(matcher);
      directory = join(directory, parts[index]!);
    }
  }
  yield* walkDirectory(workspace, base, base, matchers, options);
}

async function* walkDirectory(
  workspace: Workspace,
  base: string,
  directory: string,
  inherited: readonly Matcher[],
  options: WalkOptions,
): AsyncGenerator<WalkedFile> {
  if (options.signal.aborted) throw new ToolError('ABORTED', 'the walk was aborted');
  let matchers = inherited;
  if (options.respectGitignore) {
    const own = await loadGitignore(directory);
    if (own !== undefined) matchers = [...inherited, own];
  }
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    // An unreadable or vanished directory is skipped; the walk reports what it could see.
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name === '.git') continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (options.respectGitignore && ignoredBy(matchers, path, true)) continue;
      if (!readable(workspace, path)) continue;
      yield* walkDirectory(workspace, base, path, matchers, options);
      continue;
    }
    if (options.respectGitignore && ignoredBy(matchers, path, false)) continue;
    let real = path;
    if (entry.isSymbolicLink()) {
      try {
        real = canonicalPath(path);
        if (!(await stat(real)).isFile() || !readable(workspace, real)) continue;
      } catch {
        // A dangling link, a link to a directory, or a target this call may not read: not listed.
        continue;
      }
    } else if (!entry.isFile() || !readable(workspace, path)) {
      continue;
    }
    const display = isWithin(workspace.root, path) ? toPosix(relative(workspace.root, path)) : path;
    yield { real, display, relativeToBase: toPosix(relative(base, path)) };
  }
}
