import { ToolError } from '../tool-error.ts';

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
