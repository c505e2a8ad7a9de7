import { closeSync, constants, fstatSync, mkdirSync, openSync, readlinkSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { ToolError } from '../tool-error.ts';
import { fileSystemFailure } from './file-errors.ts';
import type { PathAccess, ResolvedPath, Workspace } from './workspace.ts';

/** A directory held open by a walk, with the canonical path the walk reached it by. */
export interface HeldDirectory {
  readonly fd: number;
  readonly path: string;
}

/** A path opened by `openVerified`: the descriptor, what it resolved to, and its `fstat`. */
export interface OpenedEntry {
  readonly fd: number;
  readonly resolved: ResolvedPath;
  readonly stat: Stats;
}

const maxSymlinkHops = 40;

let procFdAvailable: boolean | undefined;

/** True when `/proc/self/fd/N` names the open file N (Linux): the walk's lookups are then race-free. */
export function procFdWorks(): boolean {
  if (procFdAvailable !== undefined) return procFdAvailable;
  try {
    const fd = openSync('/', constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      procFdAvailable = readlinkSync(`/proc/self/fd/${fd}`) === '/';
    } finally {
      closeSync(fd);
    }
  } catch {
    // No procfs (not Linux, or a restricted container): lookups go by the walk's tracked path instead.
    procFdAvailable = false;
  }
  return procFdAvailable;
}

/**
 * The path of `name` looked up inside the held directory's inode: `/proc/self/fd/<fd>/<name>`, which
 * the kernel resolves from the open directory itself (whatever its path has become), like `openat`.
 */
export function insideHeld(directory: HeldDirectory, name: string): string {
  if (procFdWorks()) return `/proc/self/fd/${directory.fd}/${name}`;
  return directory.path === '/' ? `/${name}` : `${directory.path}/${name}`;
}

/** The symlink target stored at `name` in a held directory; undefined when `name` is no symlink. */
export function heldLinkTarget(directory: HeldDirectory, name: string): string | undefined {
  try {
    return readlinkSync(insideHeld(directory, name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EINVAL' || code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** Throws `PATH_CHANGED` unless the descriptor's real path (per `/proc/self/fd`) is still `expected`. */
export function verifyDescriptorPath(fd: number, expected: string, display: string): void {
  if (!procFdWorks()) return;
  let actual: string;
  try {
    actual = readlinkSync(`/proc/self/fd/${fd}`);
  } catch (error) {
    throw fileSystemFailure(error, display);
  }
  if (actual !== expected) {
    throw new ToolError(
      'PATH_CHANGED',
      `${display} moved while the call ran (it is now ${actual}); nothing was read or written`,
    );
  }
}

function components(path: string): string[] {
  return path.split('/').filter((part) => part !== '' && part !== '.');
}

const directoryFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * One resolution of a path, component by component, each looked up inside the directory opened just
 * before (never by a path string that could be swapped in between). Symlinks are read and resolved by
 * the walk itself, so the path it tracks is the canonical path of what it holds open.
 */
export class PathWalk {
  readonly #workspace: Workspace;
  readonly #requested: string;
  readonly #stack: HeldDirectory[] = [];
  #queue: string[] = [];
  #hops = 0;

  constructor(workspace: Workspace, requested: string) {
    this.#workspace = workspace;
    this.#requested = requested;
    this.#restart(workspace.absolute(requested));
  }

  /** The directory the walk stands in. */
  get current(): HeldDirectory {
    return this.#stack[this.#stack.length - 1]!;
  }

  /**
   * Walks every component but the last and returns the last one's name ('' when the path ends in a
   * directory the walk holds). With `createFor`, missing directories are created once that access to
   * them is permitted.
   */
  advance(createFor?: PathAccess): string {
    while (this.#queue.length > 0) {
      const name = this.#queue.shift()!;
      if (name === '..') {
        this.#ascend();
        continue;
      }
      if (this.#queue.length === 0) return name;
      this.#descend(name, createFor);
    }
    return '';
  }

  /** Continues the walk through a symlink met at the last component (its target replaces it). */
  follow(target: string): void {
    this.#countHop();
    if (isAbsolute(target)) this.#restart(target);
    else this.#queue = components(target);
  }

  /** Hands the current directory's descriptor to the caller (who closes it); the rest is released. */
  takeCurrent(): HeldDirectory {
    const taken = this.#stack.pop()!;
    this.release();
    return taken;
  }

  /** The resolved form of a canonical path this walk reached. */
  describe(real: string): ResolvedPath {
    return this.#workspace.describe(this.#requested, real);
  }

  /** Closes every directory the walk still holds. */
  release(): void {
    for (const held of this.#stack.splice(0)) closeSync(held.fd);
  }

  #countHop(): void {
    if (++this.#hops > maxSymlinkHops) {
      this.release();
      throw new ToolError('PATH_UNRESOLVABLE', `too many symbolic links in ${this.#requested}`);
    }
  }

  #restart(absolute: string): void {
    this.release();
    const root = this.#workspace.root;
    const fromRoot = absolute === root || absolute.startsWith(`${root}/`);
    const start = fromRoot ? root : '/';
    let fd: number;
    try {
      fd = openSync(start, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (error) {
      throw fileSystemFailure(error, this.#requested);
    }
    if (fromRoot) {
      const stat = fstatSync(fd);
      const identity = this.#workspace.rootIdentity;
      if (stat.dev !== identity.dev || stat.ino !== identity.ino) {
        closeSync(fd);
        throw new ToolError('WORKSPACE_CHANGED', `the workspace root ${root} was replaced; nothing was done`);
      }
    }
    this.#stack.push({ fd, path: start });
    this.#queue = [...components(fromRoot ? absolute.slice(root.length) : absolute), ...this.#queue];
  }

  #ascend(): void {
    if (this.#stack.length > 1) {
      closeSync(this.#stack.pop()!.fd);
      return;
    }
    const bottom = this.#stack[0]!;
    if (bottom.path === '/') return;
    let fd: number;
    try {
      fd = openSync(insideHeld(bottom, '..'), directoryFlags);
    } catch (error) {
      this.release();
      throw fileSystemFailure(error, this.#requested);
    }
    closeSync(bottom.fd);
    this.#stack[0] = { fd, path: dirname(bottom.path) };
  }

  #descend(name: string, createFor: PathAccess | undefined): void {
    const parent = this.current;
    const path = join(parent.path, name);
    for (;;) {
      try {
        this.#stack.push({ fd: openSync(insideHeld(parent, name), directoryFlags), path });
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOTDIR' || code === 'ELOOP') {
          const target = heldLinkTarget(parent, name);
          if (target !== undefined) {
            // The link's target replaces it, resolved from the directory holding the link.
            this.#countHop();
            if (isAbsolute(target)) this.#restart(target);
            else this.#queue = [...components(target), ...this.#queue];
            return;
          }
          if (code === 'ELOOP') continue;
        }
        if (code === 'ENOENT' && createFor !== undefined) {
          // Below a missing directory nothing exists yet: the rest of the path is where the call lands.
          this.#workspace.assertPermitted(this.describe(join(path, ...this.#queue)), createFor);
          this.#countHop();
          try {
            mkdirSync(insideHeld(parent, name), 0o777);
          } catch (made) {
            if ((made as NodeJS.ErrnoException).code !== 'EEXIST') {
              this.release();
              throw fileSystemFailure(made, this.#requested);
            }
          }
          continue;
        }
        this.release();
        throw fileSystemFailure(error, this.#requested);
      }
    }
  }
}

/** Throws `HARD_LINKED` for a regular file with several links unless the call's grant covers it. */
export function assertSingleLink(
  workspace: Workspace,
  resolved: ResolvedPath,
  stat: Stats,
  access: PathAccess,
): void {
  if (!stat.isFile() || stat.nlink <= 1) return;
  if (workspace.granted(resolved.real, access)) return;
  throw new ToolError(
    'HARD_LINKED',
    `${resolved.requested} is a file with ${stat.nlink} hard links; another of its names may lie outside ` +
      `the workspace, so ${access === 'read' ? 'reading' : 'writing'} it needs approval`,
  );
}

/**
 * The one way built-in tools open a path for reading: walks it race-free (see `PathWalk`), checks the
 * canonical path's zone before opening the last component (with `O_NOFOLLOW`), verifies the descriptor's
 * real path via `/proc/self/fd`, and refuses hard-linked files the call was not granted. The caller
 * closes `fd`. Directories are returned open too (for listing).
 */
export function openVerified(workspace: Workspace, requested: string): OpenedEntry {
  const walk = new PathWalk(workspace, requested);
  try {
    for (;;) {
      const name = walk.advance();
      if (name === '') {
        const held = walk.current;
        const resolved = walk.describe(held.path);
        workspace.assertPermitted(resolved, 'read');
        const taken = walk.takeCurrent();
        return { fd: taken.fd, resolved, stat: fstatSync(taken.fd) };
      }
      const parent = walk.current;
      const resolved = walk.describe(join(parent.path, name));
      workspace.assertPermitted(resolved, 'read');
      let fd: number;
      try {
        // O_NONBLOCK: opening a FIFO must not block the process waiting for a writer.
        fd = openSync(
          insideHeld(parent, name),
          constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        );
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const target = code === 'ELOOP' ? heldLinkTarget(parent, name) : undefined;
        if (target !== undefined) {
          walk.follow(target);
          continue;
        }
        if (code === 'ELOOP') continue;
        throw fileSystemFailure(error, requested);
      }
      try {
        verifyDescriptorPath(fd, resolved.real, requested);
        const stat = fstatSync(fd);
        assertSingleLink(workspace, resolved, stat, 'read');
        return { fd, resolved, stat };
      } catch (error) {
        closeSync(fd);
        throw error;
      }
    }
  } finally {
    walk.release();
  }
}
