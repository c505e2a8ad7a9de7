import { AsyncLocalStorage } from 'node:async_hooks';
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError } from '../tool-error.ts';

/** How a call means to use a path: reading never changes it; writing creates, replaces or edits it. */
export type PathAccess = 'read' | 'write';

/** Where a canonical path lies relative to the workspace. */
export type PathZone =
  /** Below the workspace root and not protected. */
  | 'inside'
  /** Outside the workspace root. */
  | 'outside'
  /** Inside the workspace but internal to git (`.git/` and everything below it). */
  | 'git-internals'
  /** Rein's own home (configuration, sessions), wherever it lies. */
  | 'rein-home'
  /** Rein's private folder of spilled tool output: readable like the workspace, never writable. */
  | 'tool-output';

/** A path resolved against the workspace. */
export interface ResolvedPath {
  /** The path as the caller gave it. */
  readonly requested: string;
  /** The canonical real path: every symlink followed, including the ones of missing tails. */
  readonly real: string;
  readonly zone: PathZone;
  /** The path relative to the workspace root (`.` for the root), or the real path when outside. */
  readonly display: string;
}

/** Outside paths a policy allowed for one call, granted to the tool body through async context. */
export interface PathGrant {
  /** Canonical paths (and everything below them) the call may read. */
  readonly read: readonly string[];
  /** Canonical paths (and everything below them) the call may write, and so also read. */
  readonly write: readonly string[];
}

const grantStorage = new AsyncLocalStorage<PathGrant>();

/** Runs `body` with a grant of outside paths; built-in tools consult it when a path is not inside. */
export function runWithPathGrant<T>(grant: PathGrant, body: () => T): T {
  return grantStorage.run(grant, body);
}

/** The grant of the call whose body is running, if a policy gave one. */
export function currentPathGrant(): PathGrant | undefined {
  return grantStorage.getStore();
}

/** The longest path (in UTF-8 bytes) accepted before any filesystem call. */
export const maxPathBytes = 4096;

const maxSymlinkHops = 40;

/** Rein's home: `REIN_HOME`, else `~/.rein`. */
export function defaultReinHome(): string {
  const fromEnvironment = process.env['REIN_HOME'];
  return fromEnvironment !== undefined && fromEnvironment !== ''
    ? resolve(fromEnvironment)
    : join(homedir(), '.rein');
}

/** True when `path` is `root` or lies below it (separator-aware: `/a/bc` is not below `/a/b`). */
export function isWithin(root: string, path: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

/**
 * The canonical real path of `absolute`, following every symlink the kernel would follow, segment by
 * segment (so `link/..` means the link target's parent, as it does for the kernel). Missing tails are
 * appended literally, and a dangling symlink resolves to where a write through it would land.
 */
export function canonicalPath(absolute: string, hops = 0): string {
  if (hops > maxSymlinkHops)
    throw new ToolError('PATH_UNRESOLVABLE', `too many symbolic links in ${absolute}`);
  let current: string = sep;
  for (const segment of absolute.split(sep)) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      current = dirname(current);
      continue;
    }
    const candidate = join(current, segment);
    let isLink = false;
    try {
      isLink = lstatSync(candidate).isSymbolicLink();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        throw new ToolError('PATH_UNRESOLVABLE', `cannot resolve ${absolute}: ${code ?? String(error)}`);
      }
    }
    if (!isLink) {
      current = candidate;
      continue;
    }
    const target = readlinkSync(candidate);
    current = canonicalPath(isAbsolute(target) ? target : `${current}${sep}${target}`, hops + 1);
  }
  return current;
}

/** Options of a Workspace. */
export interface WorkspaceOptions {
  /** The workspace root; it must exist. */
  root: string;
  /** Rein's home, protected like `.git/`; `REIN_HOME` or `~/.rein` by default. */
  reinHome?: string;
}

/**
 * The confinement of tools to one directory: paths are resolved to canonical real paths and compared
 * with the canonical root by a separator-aware prefix check; `.git/` internals and Rein's home are
 * protected even for files that do not exist yet.
 */
export class Workspace {
  /** The canonical workspace root. */
  readonly root: string;
  /** Rein's home (canonical where it exists). */
  readonly reinHome: string;
  /** The private folder spilled tool output is written to (inside Rein's home). */
  readonly outputDirectory: string;
  /** Device and inode of the root when the workspace was made: a root swapped since is refused. */
  readonly rootIdentity: { readonly dev: number; readonly ino: number };

  constructor(options: WorkspaceOptions) {
    let root: string;
    try {
      root = realpathSync(resolve(options.root));
    } catch (error) {
      throw new ToolError('WORKSPACE_MISSING', `the workspace ${options.root} does not exist`, {
        cause: error,
      });
    }
    this.root = root;
    const rootStat = statSync(root);
    this.rootIdentity = { dev: rootStat.dev, ino: rootStat.ino };
    this.reinHome = canonicalPath(resolve(options.reinHome ?? defaultReinHome()));
    this.outputDirectory = join(this.reinHome, 'tool-output');
  }

  /**
   * Resolves a caller's path (relative to the root; `~` means the user's home) to its canonical form
   * and zone. Throws ToolError `INVALID_PATH` for empty, NUL-bearing or overlong paths.
   */
  resolve(requested: string): ResolvedPath {
    const real = canonicalPath(this.absolute(requested));
    return this.describe(requested, real);
  }

  /**
   * The absolute spelling of a caller's path, symlinks and `..` untouched (relative to the root; `~`
   * means the user's home). Throws ToolError `INVALID_PATH` for empty, NUL-bearing or overlong paths.
   */
  absolute(requested: string): string {
    if (typeof requested !== 'string' || requested === '') {
      throw new ToolError('INVALID_PATH', 'path must be a non-empty string');
    }
    if (requested.includes('\0')) throw new ToolError('INVALID_PATH', 'path contains a NUL byte');
    if (Buffer.byteLength(requested) > maxPathBytes) {
      throw new ToolError('INVALID_PATH', `path is longer than ${maxPathBytes} bytes`);
    }
    // Plain concatenation, never path.join: join would fold `link/..` lexically, which the kernel does not.
    let expanded = requested;
    if (requested === '~') expanded = homedir();
    else if (requested.startsWith('~/')) expanded = `${homedir()}${sep}${requested.slice(2)}`;
    return isAbsolute(expanded) ? expanded : `${this.root}${sep}${expanded}`;
  }

  /** The resolved form of a canonical path reached for `requested` (its zone and display). */
  describe(requested: string, real: string): ResolvedPath {
    const zone = this.zoneOf(real);
    const display = isWithin(this.root, real) ? relative(this.root, real) || '.' : real;
    return { requested, real, zone, display };
  }

  /** The zone of a canonical path. */
  zoneOf(real: string): PathZone {
    if (isWithin(this.outputDirectory, real)) return 'tool-output';
    if (isWithin(this.reinHome, real)) return 'rein-home';
    if (!isWithin(this.root, real)) return 'outside';
    const parts = relative(this.root, real).split(sep);
    return parts.includes('.git') ? 'git-internals' : 'inside';
  }

  /**
   * Resolves a path and checks that `access` is permitted: inside paths (and spilled output, for
   * reads) always, `.git/` internals for reads only, anything else only under the current grant.
   * Throws ToolError `PATH_OUTSIDE_WORKSPACE` / `PATH_PROTECTED`; call it again just before acting.
   */
  check(requested: string, access: PathAccess): ResolvedPath {
    const resolved = this.resolve(requested);
    this.assertPermitted(resolved, access);
    return resolved;
  }

  /** Re-resolves a checked path just before the operation and fails if it now resolves elsewhere. */
  recheck(previous: ResolvedPath, access: PathAccess): ResolvedPath {
    const again = this.check(previous.requested, access);
    if (again.real !== previous.real) {
      throw new ToolError(
        'PATH_CHANGED',
        `${previous.requested} changed while the call ran (now resolves to ${again.real}); nothing was done`,
      );
    }
    return again;
  }

  /** True when the running call's grant covers `real` for `access` (a write grant covers reads too). */
  granted(real: string, access: PathAccess): boolean {
    const grant = currentPathGrant();
    if (grant === undefined) return false;
    const covers = (list: readonly string[]): boolean => list.some((path) => isWithin(path, real));
    return covers(grant.write) || (access === 'read' && covers(grant.read));
  }

  /** Throws unless `access` to a resolved path is permitted (see `check`). */
  assertPermitted(resolved: ResolvedPath, access: PathAccess): void {
    const grant = currentPathGrant();
    const granted = (list: readonly string[] | undefined): boolean =>
      list !== undefined && list.some((path) => isWithin(path, resolved.real));
    switch (resolved.zone) {
      case 'inside':
        return;
      case 'tool-output':
        if (access === 'read') return;
        throw new ToolError(
          'PATH_PROTECTED',
          `${resolved.requested} is Rein's saved tool output and is read-only`,
        );
      case 'git-internals':
        if (access === 'read') return;
        throw new ToolError(
          'PATH_PROTECTED',
          `${resolved.requested} is inside .git/ and may not be changed by tools`,
        );
      case 'rein-home':
        if (access === 'read' && granted(grant?.read)) return;
        throw new ToolError(
          'PATH_PROTECTED',
          `${resolved.requested} is inside Rein's home, which tools may not touch`,
        );
      case 'outside':
        // A path granted for writing may be read too (a write checks what it replaces).
        if (granted(grant?.write) || (access === 'read' && granted(grant?.read))) return;
        throw new ToolError(
          'PATH_OUTSIDE_WORKSPACE',
          `${resolved.requested} resolves to ${resolved.real}, outside the workspace ${this.root}; ` +
            (access === 'read' ? 'reading it needs approval' : 'writing it needs an explicit allow rule'),
        );
    }
  }
}
