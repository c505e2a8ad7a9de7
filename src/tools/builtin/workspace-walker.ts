import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Ignore, default as IgnoreFactory } from 'ignore';
import { lazyModule } from '../../llm/lazy-module.ts';
import { ToolError } from '../tool-error.ts';
import { readTextFile, readWhole } from './file-access.ts';
import type { HeldDirectory } from './verified-open.ts';
import { insideHeld, openVerified } from './verified-open.ts';
import type { Workspace } from './workspace.ts';
import { isWithin } from './workspace.ts';

const ignore = lazyModule<typeof IgnoreFactory>('ignore');

/** A file opened for reading by a walk: its descriptor (the caller closes it) and `fstat`. */
export interface WalkOpened {
  readonly fd: number;
  readonly stat: Stats;
}

/** One file found by a walk. */
export interface WalkedFile {
  /** The path as shown to the model: relative to the workspace root when inside, else absolute. */
  readonly display: string;
  /** The path relative to the walk's base, with `/` separators (what glob patterns match). */
  readonly relativeToBase: string;
  /**
   * Opens the file race-free (relative to the directory the walk holds, or through `openVerified` for
   * a symlink); valid only until the walk moves on. Undefined when it is no longer a single-link regular
   * file (the change is then reported as skipped).
   */
  open(): WalkOpened | undefined;
}

/** Why a walk left an entry out. */
export type SkipReason =
  /** A symlink whose target lies outside what this call may read (or cannot be resolved). */
  | 'link-outside'
  /** A symlink to a directory: walks never follow those. */
  | 'link-to-directory'
  /** A regular file with more than one hard link: another of its names may lie outside. */
  | 'hard-link'
  /** A directory or file that turned into a symlink (or vanished) while the walk looked at it. */
  | 'changed';

/** An entry a walk left out, and why. */
export interface SkippedEntry {
  readonly display: string;
  readonly reason: SkipReason;
}

/** Options of a walk. */
export interface WalkOptions {
  /** Honour `.gitignore` files (the root's, the base's ancestors' and every nested one). */
  readonly respectGitignore: boolean;
  readonly signal: AbortSignal;
  /** Receives every entry left out for confinement reasons. */
  readonly skipped?: SkippedEntry[];
}

interface Matcher {
  readonly directory: string;
  readonly rules: Ignore;
}

const readFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const directoryFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const maxGitignoreBytes = 1024 * 1024;

function toPosix(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

// A nested .gitignore is read through the held directory and only when it is a single-link regular file.
function heldGitignore(directory: HeldDirectory): Matcher | undefined {
  let fd: number;
  try {
    fd = openSync(insideHeld(directory, '.gitignore'), readFlags);
  } catch {
    // No .gitignore here (or a symlink in its place): nothing to honour.
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.nlink > 1 || stat.size > maxGitignoreBytes) return undefined;
    return { directory: directory.path, rules: ignore()().add(readWhole(fd, stat.size).toString('utf8')) };
  } finally {
    closeSync(fd);
  }
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
    workspace.assertPermitted(workspace.describe(real, real), 'read');
    return true;
  } catch {
    // Not readable for this call (e.g. Rein's home below the workspace): the walk leaves it out.
    return false;
  }
}

/**
 * Walks the regular files below a base directory the caller holds open (from `openVerified`), in sorted
 * order: `.git/` is never entered, ignored paths are pruned, every directory is entered relative to its
 * parent's descriptor with `O_NOFOLLOW` (so a directory swapped for a symlink is skipped, not followed),
 * symlinked directories are not followed, a symlinked file is listed only when `openVerified` lets this
 * call read its target, and hard-linked files are left out; what was left out lands in `skipped`.
 */
export async function* walkFiles(
  workspace: Workspace,
  base: HeldDirectory,
  options: WalkOptions,
): AsyncGenerator<WalkedFile> {
  const matchers: Matcher[] = [];
  if (options.respectGitignore && isWithin(workspace.root, base.path)) {
    // The .gitignore files of the base's ancestors (from the root down) apply to everything below it.
    const parts = relative(workspace.root, base.path)
      .split(sep)
      .filter((part) => part !== '');
    let directory = workspace.root;
    for (let index = 0; index < parts.length; index++) {
      try {
        const text = readTextFile(workspace, join(directory, '.gitignore'), maxGitignoreBytes).text;
        matchers.push({ directory, rules: ignore()().add(text) });
      } catch {
        // No (readable, single-link) .gitignore in this ancestor: nothing to honour there.
      }
      directory = join(directory, parts[index]!);
    }
  }
  yield* walkDirectory(workspace, base, base, matchers, options);
}

async function* walkDirectory(
  workspace: Workspace,
  base: HeldDirectory,
  directory: HeldDirectory,
  inherited: readonly Matcher[],
  options: WalkOptions,
): AsyncGenerator<WalkedFile> {
  if (options.signal.aborted) throw new ToolError('ABORTED', 'the walk was aborted');
  const skip = (path: string, reason: SkipReason): void => {
    options.skipped?.push({ display: displayOf(workspace, path), reason });
  };
  let matchers = inherited;
  if (options.respectGitignore) {
    const own = heldGitignore(directory);
    if (own !== undefined) matchers = [...inherited, own];
  }
  let entries: Dirent[];
  try {
    entries = await readdir(insideHeld(directory, ''), { withFileTypes: true });
  } catch {
    // An unreadable or vanished directory is skipped; the walk reports what it could see.
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name === '.git') continue;
    const path = join(directory.path, entry.name);
    const relativeToBase = toPosix(relative(base.path, path));
    if (entry.isDirectory()) {
      if (options.respectGitignore && ignoredBy(matchers, path, true)) continue;
      if (!readable(workspace, path)) continue;
      let fd: number;
      try {
        fd = openSync(insideHeld(directory, entry.name), directoryFlags);
      } catch {
        // Swapped for a symlink (or removed) since it was listed: never followed.
        skip(path, 'changed');
        continue;
      }
      try {
        yield* walkDirectory(workspace, base, { fd, path }, matchers, options);
      } finally {
        closeSync(fd);
      }
      continue;
    }
    if (options.respectGitignore && ignoredBy(matchers, path, false)) continue;
    if (entry.isSymbolicLink()) {
      const target = symlinkedFile(workspace, path);
      if (target !== 'file') {
        skip(path, target);
        continue;
      }
      yield {
        display: displayOf(workspace, path),
        relativeToBase,
        open: () => {
          try {
            return openVerified(workspace, path);
          } catch {
            // The link changed since it was checked: left out, and said so.
            skip(path, 'changed');
            return undefined;
          }
        },
      };
      continue;
    }
    if (!entry.isFile() || !readable(workspace, path)) continue;
    let links: number;
    try {
      links = lstatSync(insideHeld(directory, entry.name)).nlink;
    } catch {
      // Removed since it was listed.
      continue;
    }
    if (links > 1 && !workspace.granted(path, 'read')) {
      skip(path, 'hard-link');
      continue;
    }
    yield {
      display: displayOf(workspace, path),
      relativeToBase,
      open: () => openHeldFile(workspace, directory, entry.name, path, skip),
    };
  }
}

function openHeldFile(
  workspace: Workspace,
  directory: HeldDirectory,
  name: string,
  path: string,
  skip: (path: string, reason: SkipReason) => void,
): WalkOpened | undefined {
  let fd: number;
  try {
    fd = openSync(insideHeld(directory, name), readFlags);
  } catch {
    skip(path, 'changed');
    return undefined;
  }
  const stat = fstatSync(fd);
  if (!stat.isFile() || (stat.nlink > 1 && !workspace.granted(path, 'read'))) {
    closeSync(fd);
    skip(path, stat.isFile() ? 'hard-link' : 'changed');
    return undefined;
  }
  return { fd, stat };
}

// What a symlink met by a walk leads to, decided by opening it the verified way (and closing it again).
function symlinkedFile(workspace: Workspace, path: string): 'file' | SkipReason {
  let opened;
  try {
    opened = openVerified(workspace, path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code === 'HARD_LINKED' ? 'hard-link' : 'link-outside';
  }
  closeSync(opened.fd);
  if (opened.stat.isDirectory()) return 'link-to-directory';
  return opened.stat.isFile() ? 'file' : 'link-outside';
}

function displayOf(workspace: Workspace, path: string): string {
  return isWithin(workspace.root, path) ? toPosix(relative(workspace.root, path)) : path;
}

/** One line per kind of entry a walk left out (empty when nothing was), for a tool's result. */
export function describeSkipped(skipped: readonly SkippedEntry[]): string[] {
  const labels: Record<SkipReason, string> = {
    'link-outside': 'symlinks leading outside what this call may read',
    'link-to-directory': 'symlinks to directories (not followed)',
    'hard-link': 'hard-linked files (another name may lie outside the workspace)',
    changed: 'entries that changed while the walk looked at them',
  };
  const lines: string[] = [];
  for (const reason of Object.keys(labels) as SkipReason[]) {
    const paths = [...new Set(skipped.filter((entry) => entry.reason === reason).map((e) => e.display))];
    if (paths.length === 0) continue;
    const shown = paths.slice(0, 20).join(', ');
    const more = paths.length > 20 ? ` and ${paths.length - 20} more` : '';
    lines.push(`(skipped ${paths.length} ${labels[reason]}: ${shown}${more})`);
  }
  return lines;
}
