import { HarnessError, LosslessJsonError } from '../llm/index.ts';

/** Codes of session-log failures. */
export type SessionErrorCode =
  | 'INVALID_EVENT'
  | 'ENCLOSURE_VIOLATION'
  | 'SURFACE_VIOLATION'
  | 'INVALID_JSON_DATA'
  | 'SESSION_CLOSED'
  | 'SESSION_EXISTS'
  | 'SESSION_NOT_FOUND'
  | 'SESSION_LOCKED'
  | 'SESSION_CORRUPT'
  | 'SESSION_VERSION'
  | 'SESSION_IO'
  | 'INVALID_SESSION_ID'
  | 'INVALID_FORK'
  | 'CHECKPOINT_FAILED'
  | 'SESSION_FENCED'
  | 'STORE_URL'
  | 'STORE_UNREACHABLE'
  | 'STORE_AUTH'
  | 'STORE_FOREIGN'
  | 'STORE_READ_ONLY';

/** A rejected append, load or store operation; nothing was written. */
export class SessionError extends HarnessError {
  constructor(code: SessionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'SessionError';
  }
}

/** What a failed snapshot throws from an append: a `LosslessJsonError` as `INVALID_JSON_DATA`, anything else as it is. */
export function appendSnapshotError(error: unknown): unknown {
  return error instanceof LosslessJsonError
    ? new SessionError('INVALID_JSON_DATA', error.message, { cause: error })
    : error;
}
