import { SessionError } from '../session-error.ts';

/** True for a Node system error with this code. */
export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** Wraps a filesystem failure as SessionError `SESSION_IO`, naming the path and the system code. */
export function ioError(path: string, error: unknown): SessionError {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const reason =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'ENOSPC'
        ? 'no space left on device'
        : error instanceof Error
          ? error.message
          : String(error);
  return new SessionError('SESSION_IO', `${path}: ${reason}${typeof code === 'string' ? ` (${code})` : ''}`, {
    cause: error,
  });
}
