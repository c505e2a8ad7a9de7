import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { ToolError } from '../tool-error.ts';
import type { ResolvedPath, Workspace } from './workspace.ts';

/** Bytes inspected to tell text from binary. */
export const binarySniffBytes = 8192;

/** True when a sample looks binary (it holds a NUL byte, which text files practically never do). */
export function looksBinary(sample: Buffer): boolean {
  return sample.subarray(0, binarySniffBytes).includes(0);
}

/** Turns a filesystem error into a ToolError whose code names what went wrong with `display`. */
export function fileSystemFailure(error: unknown, display: string): ToolError {
  if (error instanceof ToolError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return new ToolError('FILE_NOT_FOUND', `${display} does not exist`, { cause: error });
    case 'EISDIR':
      return new ToolError('IS_A_DIRECTORY', `${display} is a directory`, { cause: error });
    case 'ENOTDIR':
      return new ToolError('NOT_A_DIRECTORY', `a parent of ${display} is not a directory`, { cause: error });
    case 'EACCES':
    case 'EPERM':
      return new ToolError('PERMISSION_DENIED', `permission denied for ${display}`, { cause: error });
    case 'ELOOP':
      return new ToolError('PATH_CHANGED', `${display} became a symbolic link while the call ran`, {
        cause: error,
      });
    case 'ENAMETOOLONG':
      return new ToolError('INVALID_PATH', `${display} is too long`, { cause: error });
    default:
      return new ToolError('FILE_ERROR', `${display}: ${(error as Error).message ?? String(error)}`, {
        cause: error,
      });
  }
}

/**
 * Opens a checked path for reading just after rechecking it; `O_NOFOLLOW` refuses a symlink swapped in
 * since. Returns the descriptor and the path's stat; the caller closes it.
 */
export function openForReading(
  workspace: Workspace,
  checked: ResolvedPath,
): { fd: number; size: number; isFile: boolean; isDirectory: boolean } {
  const resolved = workspace.recheck(checked, 'read');
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not block the process waiting for a writer.
    fd = openSync(resolved.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw fileSystemFailure(error, checked.requested);
  }
  const stat = fstatSync(fd);
  return { fd, size: stat.size, isFile: stat.isFile(), isDirectory: stat.isDirectory() };
}

/** Reads a whole regular text file; refuses directories, binary files and files over `maxBytes`. */
export function readTextFile(
  workspace: Workspace,
  checked: ResolvedPath,
  maxBytes: number,
): { text: string; bytes: number } {
  const opened = openForReading(workspace, checked);
  try {
    if (opened.isDirectory) throw new ToolError('IS_A_DIRECTORY', `${checked.requested} is a directory`);
    if (!opened.isFile) throw new ToolError('NOT_A_FILE', `${checked.requested} is not a regular file`);
    if (opened.size > maxBytes) {
      throw new ToolError(
        'FILE_TOO_LARGE',
        `${checked.requested} is ${opened.size} bytes, over the ${maxBytes}-byte limit of this tool`,
      );
    }
    const buffer = Buffer.alloc(opened.size);
    let read = 0;
    while (read < buffer.length) {
      const count = readSync(opened.fd, buffer, read, buffer.length - read, read);
      if (count === 0) break;
      read += count;
    }
    const content = buffer.subarray(0, read);
    if (looksBinary(content)) {
      throw new ToolError(
        'BINARY_FILE',
        `${checked.requested} is a binary file (${read} bytes); it cannot be shown as text`,
      );
    }
    return { text: content.toString('utf8'), bytes: read };
  } finally {
    closeSync(opened.fd);
  }
}

/** Whether a checked path exists as a regular file right now (false when missing). */
export function existingFile(workspace: Workspace, checked: ResolvedPath): boolean {
  let opened: ReturnType<typeof openForReading>;
  try {
    opened = openForReading(workspace, checked);
  } catch (error) {
    if (error instanceof ToolError && error.code === 'FILE_NOT_FOUND') return false;
    throw error;
  }
  closeSync(opened.fd);
  if (opened.isDirectory) throw new ToolError('IS_A_DIRECTORY', `${checked.requested} is a directory`);
  if (!opened.isFile) throw new ToolError('NOT_A_FILE', `${checked.requested} is not a regular file`);
  return true;
}

/**
 * Writes a checked path: creates missing parents, rechecks the path just before opening, and opens the
 * canonical path with `O_NOFOLLOW` so a symlink swapped in meanwhile is refused, not followed.
 */
export function writeTextFile(workspace: Workspace, checked: ResolvedPath, content: string): number {
  try {
    mkdirSync(dirname(checked.real), { recursive: true });
  } catch (error) {
    throw fileSystemFailure(error, checked.requested);
  }
  const resolved = workspace.recheck(checked, 'write');
  let fd: number;
  try {
    fd = openSync(
      resolved.real,
      constants.O_WRONLY |
        constants.O_CREAT |
        constants.O_TRUNC |
        constants.O_NOFOLLOW |
        constants.O_NONBLOCK,
      0o666,
    );
  } catch (error) {
    throw fileSystemFailure(error, checked.requested);
  }
  try {
    const buffer = Buffer.from(content, 'utf8');
    let written = 0;
    while (written < buffer.length) written += writeSync(fd, buffer, written);
    return buffer.length;
  } catch (error) {
    throw fileSystemFailure(error, checked.requested);
  } finally {
    closeSync(fd);
  }
}
