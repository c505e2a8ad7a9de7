import { HarnessError } from '../index.ts';

/** An error the server answers with an HTTP status and a JSON body `{ error: { code, message } }`. */
export class HttpError extends HarnessError {
  readonly status: number;
  constructor(status: number, code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'HttpError';
    this.status = status;
  }
}

// Harness error codes mapped to their HTTP status: what the client asked for wrong, or (503) could not store.
const statusOfCode: Readonly<Record<string, number>> = {
  SESSION_NOT_FOUND: 404,
  SESSION_EXISTS: 409,
  SESSION_LOCKED: 409,
  SESSION_CLOSED: 409,
  AGENT_EXISTS: 409,
  AGENT_BUSY: 409,
  NOTHING_PAUSED: 409,
  AGENT_DISPOSED: 409,
  INVALID_OPTIONS: 400,
  INVALID_INBOX_OPERATION: 400,
  INVALID_JSON_DATA: 400,
  INVALID_EVENT: 400,
  NO_ADAPTER: 400,
  UNKNOWN_MODEL: 400,
  INVALID_GOAL: 400,
  INVALID_BUDGET: 400,
  // The log could not be made durable (a full disk, a lost database): the server cannot take it now.
  CHECKPOINT_FAILED: 503,
  GOALS_NOT_INSTALLED: 501,
  BUDGETS_NOT_INSTALLED: 501,
};

/** Maps any thrown value to the status, code and message the API answers with. */
export function describeFailure(error: unknown): { status: number; code: string; message: string } {
  if (error instanceof HttpError) return { status: error.status, code: error.code, message: error.message };
  if (error instanceof HarnessError) {
    // Any other typed harness error is a refusal the caller can read, not a server crash.
    return { status: statusOfCode[error.code] ?? 422, code: error.code, message: error.message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, code: 'INTERNAL', message };
}
