/** The canonical failure codes; consumers route on these, never on message text. */
export type LlmErrorCode =
  | 'RATE_LIMIT'
  | 'AUTH'
  | 'SERVER'
  | 'TIMEOUT'
  | 'TRANSPORT'
  | 'QUOTA'
  | 'CONTEXT_WINDOW_EXCEEDED'
  | 'EMPTY_RESPONSE'
  | 'INVALID_REQUEST'
  | 'INVALID_CREDENTIAL'
  | 'MISSING_CREDENTIAL'
  | 'INVALID_RESPONSE'
  | 'CONTENT_FILTER'
  | 'ABORTED'
  | 'NO_ADAPTER'
  | 'UNKNOWN_MODEL'
  | 'INVALID_PREPARED_CALL'
  | 'UNSUPPORTED_REASONING_EFFORT'
  | 'IMAGES_UNSUPPORTED'
  | 'IMAGES_TOO_LARGE'
  | 'REGISTRATION_DISPOSED'
  | 'UNKNOWN'
  | `HTTP_${number}`;

/** Serializable facts about a failed model call. */
export interface LlmFailure {
  message: string;
  code: LlmErrorCode | (string & {});
  status?: number;
  providerRetryAfterMs?: number;
  requestId?: string;
  /** The vendor's own structured facts about the failure (Anthropic's `stop_details` on a refusal). */
  details?: Record<string, unknown>;
}

/** Base class of Rein's own errors: every one carries a stable `code`. */
export class HarnessError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'HarnessError';
  }
}

/** A model-call failure with its frozen, serializable facts. */
export class LlmError extends HarnessError {
  readonly failure: Readonly<LlmFailure>;
  constructor(failure: LlmFailure, options?: { cause?: unknown }) {
    super(failure.code, failure.message, options);
    this.name = 'LlmError';
    this.failure = Object.freeze(sanitizeFailure(failure));
  }
}

/** Keeps only valid fields of a failure: an HTTP status 100–599 and a positive finite retry-after. */
export function sanitizeFailure(failure: LlmFailure): LlmFailure {
  const out: LlmFailure = { message: String(failure.message), code: String(failure.code) };
  if (Number.isInteger(failure.status) && failure.status! >= 100 && failure.status! <= 599) {
    out.status = failure.status!;
  }
  const after = failure.providerRetryAfterMs;
  if (typeof after === 'number' && Number.isFinite(after) && after > 0) out.providerRetryAfterMs = after;
  if (typeof failure.requestId === 'string' && failure.requestId !== '') out.requestId = failure.requestId;
  const details = failure.details;
  if (typeof details === 'object' && details !== null && !Array.isArray(details)) out.details = details;
  return out;
}

/** The text of an error and its causes, joined, for failures that are not LlmErrors. */
export function errorChainText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    if (current instanceof Error) {
      parts.push(current.message || current.name);
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.join(': ') || 'unknown error';
}

/**
 * Normalizes any thrown value into failure facts: a valid own `failure` whose code matches wins;
 * otherwise the message plus the error's code if it is a harness error, else `UNKNOWN`.
 */
export function toFailure(error: unknown): LlmFailure {
  if (error instanceof LlmError) return { ...error.failure };
  if (typeof error === 'object' && error !== null) {
    const candidate = (error as { failure?: unknown; code?: unknown }).failure;
    const code = (error as { code?: unknown }).code;
    if (
      typeof candidate === 'object' &&
      candidate !== null &&
      typeof (candidate as LlmFailure).message === 'string' &&
      typeof (candidate as LlmFailure).code === 'string' &&
      (candidate as LlmFailure).code === code
    ) {
      return sanitizeFailure(candidate as LlmFailure);
    }
  }
  return {
    message: errorChainText(error),
    code: error instanceof HarnessError ? error.code : 'UNKNOWN',
  };
}

/** True when the value is an AbortError-like exception or carries the ABORTED code. */
export function isAbortError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const name = (error as { name?: unknown }).name;
  const code = (error as { code?: unknown }).code;
  return name === 'AbortError' || code === 'ABORTED' || code === 'ABORT_ERR';
}
