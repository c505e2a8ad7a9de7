import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { ToolError } from '../tool-error.ts';
import { fileSystemFailure } from './file-errors.ts';
import type { HeldDirectory } from './verified-open.ts';
import {
  PathWalk,
  assertSingleLink,
  heldLinkTarget,
  insideHeld,
  openVerified,
  verifyDescriptorPath,
} from './verified-open.ts';
import type { ResolvedPath, Workspace } from './workspace.ts';

export { fileSystemFailure } from './file-errors.ts';

/** Bytes inspected to tell text from binary. */
export const binarySniffBytes = 8192;

/** True when a sample looks binary (it holds a NUL byte, which text files practically never do). */
export function looksBinary(sample: Buffer): boolean {
  return sample.subarray(0, binarySniffBytes).includes(0);
}

/** Reads every byte of an open regular file of `size` bytes (fewer when it shrank meanwhile). */
export function readWhole(fd: number, size: number): Buffer {
  const buffer = Buffer.alloc(size);
  let read = 0;
  while (read < buffer.length) {
    const count = readSync(fd, buffer, read, buffer.length - read, read);
    if (count === 0) break;
    read += count;
  }
  return buffer.subarray(0, read);
}

/**
 * Reads a whole regular text file through `openVerified`; refuses directories, binary files and files
 * over `maxBytes`.
 */
export function readTextFile(
  workspace: Workspace,
  requested: string,
  maxBytes: number,
): { text: string; bytes: number; resolved: ResolvedPath } {
  const opened = openVerified(workspace, requested);
  try {
    if (opened.stat.isDirectory()) throw new ToolError('IS_A_DIRECTORY', `${requested} is a directory`);
    if (!opened.stat.isFile()) throw new ToolError('NOT_A_FILE', `${requested} is not a regular file`);
    if (opened.stat.size > maxBytes) {
      throw new ToolError(
        'FILE_TOO_LARGE',
        `${requested} is ${opened.stat.size} bytes, over the ${maxBytes}-byte limit of this tool`,
      );
    }
    const content = readWhole(opened.fd, opened.stat.size);
    if (looksBinary(content)) {
      throw new ToolError(
        'BINARY_FILE',
        `${requested} is a binary file (${content.length} bytes); it cannot be shown as text`,
      );
    }
    return { text: content.toString('utf8'), bytes: content.length, resolved: opened.resolved };
  } finally {
    closeSync(opened.fd);
  }
}

/** What `writeVerified` did. */
export interface WriteOutcome {
  readonly resolved: ResolvedPath;
  /** True when a file of that name existed and was replaced. */
  readonly replaced: boolean;
  readonly bytes: number;
}

// A flipper that keeps swapping the last component between a link and a file cannot keep a write looping.
const maxWriteAttempts = 40;

/**
 * The one way built-in tools write a file: walks the path race-free (creating missing parents once
 * permitted), checks the canonical path's zone, follows a symlink at the last component only through the
 * walk, refuses a hard-linked file the call was not granted, then writes a temporary file inside the
 * verified directory and renames it over the name, re-verifying the directory first. The old inode is
 * never truncated; a replaced file keeps its mode (and, where permitted, its owner).
 */
export function writeVerified(workspace: Workspace, requested: string, content: Buffer): WriteOutcome {
  const walk = new PathWalk(workspace, requested);
  try {
    for (let attempt = 0; ; attempt++) {
      if (attempt >= maxWriteAttempts) {
        throw new ToolError(
          'PATH_CHANGED',
          `${requested} kept changing while the call ran; nothing was written`,
        );
      }
      const name = walk.advance('write');
      if (name === '') throw new ToolError('IS_A_DIRECTORY', `${requested} is a directory`);
      const parent = walk.current;
      const resolved = walk.describe(join(parent.path, name));
      workspace.assertPermitted(resolved, 'write');
      const target = heldLinkTarget(parent, name);
      if (target !== undefined) {
        walk.follow(target);
        continue;
      }
      let existing: Stats | undefined;
      try {
        existing = lstatSync(insideHeld(parent, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fileSystemFailure(error, requested);
      }
      // Became a symlink since it was looked at: look again.
      if (existing?.isSymbolicLink() === true) continue;
      if (existing?.isDirectory() === true)
        throw new ToolError('IS_A_DIRECTORY', `${requested} is a directory`);
      if (existing !== undefined && !existing.isFile()) {
        throw new ToolError('NOT_A_FILE', `${requested} is not a regular file`);
      }
      if (existing !== undefined) assertSingleLink(workspace, resolved, existing, 'write');
      replaceContent(parent, name, content, existing, requested);
      return { resolved, replaced: existing !== undefined, bytes: content.length };
    }
  } finally {
    walk.release();
  }
}

function replaceContent(
  parent: HeldDirectory,
  name: string,
  content: Buffer,
  existing: Stats | undefined,
  requested: string,
): void {
  const temporary = insideHeld(parent, `.${name.slice(0, 64)}.${randomBytes(6).toString('hex')}.rein-tmp`);
  let fd: number;
  try {
    fd = openSync(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o666,
    );
  } catch (error) {
    throw fileSystemFailure(error, requested);
  }
  let placed = false;
  try {
    try {
      let written = 0;
      while (written < content.length) written += writeSync(fd, content, written);
      if (existing !== undefined) {
        fchmodSync(fd, existing.mode & 0o7777);
        if (existing.uid !== process.getuid?.() || existing.gid !== process.getgid?.()) {
          try {
            fchownSync(fd, existing.uid, existing.gid);
          } catch {
            // Not permitted for an unprivileged user: the replaced file is then owned by the writer.
          }
        }
      }
    } finally {
      closeSync(fd);
    }
    verifyDescriptorPath(parent.fd, parent.path, requested);
    renameSync(temporary, insideHeld(parent, name));
    placed = true;
  } catch (error) {
    throw fileSystemFailure(error, requested);
  } finally {
    if (!placed) {
      try {
        unlinkSync(temporary);
      } catch {
        // Already gone: nothing is left behind either way.
      }
    }
  }
}

/** Writes UTF-8 text through `writeVerified`; returns the bytes written. */
export function writeTextFile(workspace: Workspace, requested: string, content: string): WriteOutcome {
  return writeVerified(workspace, requested, Buffer.from(content, 'utf8'));
}
