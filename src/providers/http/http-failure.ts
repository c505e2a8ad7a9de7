import type { LlmErrorCode, LlmFailure } from '../../llm/index.ts';

/** The error facts a vendor put in a response body: its message, type and code, when it said any. */
export interface VendorErrorBody {
  message: string | undefined;
  type: string | undefined;
  code: string | undefined;
  /** A finer code some vendors add, e.g. Anthropic's `error.details.error_code`. */
  detailCode?: string | undefined;
}

/** Reads a vendor error body: OpenAI-style `{ error: { message, type, code } }` or Anthropic-style `{ type: 'error', error: { type, message } }`. */
export function parseVendorError(body: unknown): VendorErrorBody {
  const empty: VendorErrorBody = { message: undefined, type: undefined, code: undefined };
  if (typeof body !== 'object' || body === null) return empty;
  const inner = (body as { error?: unknown }).error;
  const source = typeof inner === 'object' && inner !== null ? inner : body;
  const field = (name: string): string | undefined => {
    const value = (source as Record<string, unknown>)[name];
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
    return undefined;
  };
  const message = field('message') ?? (typeof inner === 'string' && inner !== '' ? inner : undefined);
  const parsed: VendorErrorBody = { message, type: field('type'), code: field('code') };
  const details = (source as { details?: unknown }).details;
  const detailCode =
    typeof details === 'object' && details !== null
      ? (details as { error_code?: unknown }).error_code
      : undefined;
  if (typeof detailCode === 'string' && detailCode !== '') parsed.detailCode = detailCode;
  return parsed;
}

// Vendor codes that mean "out of money or over a spending limit": retrying does not help.
const quotaCodes =
  /insufficient_quota|insufficient_balance|billing|spend_limit|credit_balance|quota_exceeded/i;

// Vendors signal context overflow only in wording or in their own code fields; this is the one place
// that reads them, so that everything downstream routes on CONTEXT_WINDOW_EXCEEDED.
const contextOverflow =
  /context[ _-]?(length|window)|maximum context|prompt is too long|too many tokens|exceeds? the (model'?s? )?(context|maximum)|input (is )?too long|reduce the length/i;

/** True when a vendor's error facts describe a prompt that does not fit the model's context window. */
export function isContextOverflow(error: VendorErrorBody): boolean {
  if (error.code === 'context_length_exceeded' || error.type === 'context_length_exceeded') return true;
  return contextOverflow.test(error.message ?? '');
}

/** Parses `retry-after-ms` or `Retry-After` (seconds or an HTTP date) into milliseconds, if valid. */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const precise = headers.get('retry-after-ms');
  if (precise !== null) {
    const value = Number(precise);
    if (Number.isFinite(value) && value > 0) return value;
  }
  const header = headers.get('retry-after');
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const date = Date.parse(header);
  if (Number.isNaN(date)) return undefined;
  const delta = date - now;
  return delta > 0 ? delta : undefined;
}

/** A wait for people: `800 ms`, `30 s`, `2 min 5 s`, `3 h 20 min`. */
export function formatWait(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  const seconds = Math.ceil(milliseconds / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `${minutes} min` : `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

/** The vendor's request id from the usual headers, for support tickets. */
export function requestIdOf(headers: Headers): string | undefined {
  return headers.get('x-request-id') ?? headers.get('request-id') ?? undefined;
}

/** Maps an HTTP status and the vendor's error facts to a canonical code. */
/**
 * Maps an HTTP status and the vendor's error facts (type, code, detail code) to a canonical code; every
 * status gets one (a redirect fetch could not follow is `INVALID_RESPONSE`, other 4xx `INVALID_REQUEST`).
 */
export function codeForStatus(status: number, error: VendorErrorBody): LlmErrorCode {
  const type = `${error.type ?? ''} ${error.code ?? ''} ${error.detailCode ?? ''}`;
  if (quotaCodes.test(type)) return 'QUOTA';
  if (/overloaded/i.test(type)) return 'SERVER';
  if (status === 400 || status === 413 || status === 422) {
    return isContextOverflow(error) ? 'CONTEXT_WINDOW_EXCEEDED' : 'INVALID_REQUEST';
  }
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 402) return 'QUOTA';
  if (status === 408) return 'TIMEOUT';
  if (status === 429) return 'RATE_LIMIT';
  if (status >= 500 && status <= 599) return 'SERVER';
  if (status >= 400 && status <= 499) return 'INVALID_REQUEST';
  return 'INVALID_RESPONSE';
}

/** Builds failure facts from a non-success HTTP response: canonical code, status, retry-after, request id. */
export function failureFromResponse(
  provider: string,
  status: number,
  headers: Headers,
  bodyText: string,
): LlmFailure {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    // Not JSON (an HTML error page from a proxy, say): the raw text becomes the message below.
    body = undefined;
  }
  const error = parseVendorError(body);
  const code = codeForStatus(status, error);
  const location = headers.get('location');
  const redirect =
    status >= 300 && status <= 399
      ? `the endpoint answered HTTP ${status}${location !== null ? ` (to ${location})` : ''} and the redirect was not followed; check the base URL`
      : undefined;
  const detail = redirect ?? error.message ?? (bodyText.trim().slice(0, 500) || `HTTP ${status}`);
  const after = retryAfterMs(headers);
  // The vendor's wait is part of the message, so a failure nobody retried still says when to try again.
  const wait = after !== undefined ? ` (the provider asks to wait ${formatWait(after)} before retrying)` : '';
  const failure: LlmFailure = { code, status, message: `${provider}: ${detail}${wait}` };
  if (after !== undefined) failure.providerRetryAfterMs = after;
  const requestId = requestIdOf(headers);
  if (requestId !== undefined) failure.requestId = requestId;
  return failure;
}

/** Builds failure facts from an error a vendor reported inside an otherwise successful stream. */
export function failureFromStreamError(provider: string, body: unknown): LlmFailure {
  const error = parseVendorError(body);
  const numeric = Number(error.code);
  let code: LlmErrorCode;
  if (Number.isInteger(numeric) && numeric >= 400 && numeric <= 599) code = codeForStatus(numeric, error);
  else if (quotaCodes.test(`${error.type ?? ''} ${error.code ?? ''} ${error.detailCode ?? ''}`))
    code = 'QUOTA';
  else if (isContextOverflow(error)) code = 'CONTEXT_WINDOW_EXCEEDED';
  else if (/rate_limit/i.test(error.type ?? '')) code = 'RATE_LIMIT';
  else if (/invalid_request/i.test(error.type ?? '')) code = 'INVALID_REQUEST';
  else if (/authentication|permission/i.test(error.type ?? '')) code = 'AUTH';
  else code = 'SERVER';
  const failure: LlmFailure = {
    code,
    message: `${provider}: ${error.message ?? 'the provider reported an error mid-stream'}`,
  };
  if (Number.isInteger(numeric) && numeric >= 100 && numeric <= 599) failure.status = numeric;
  return failure;
}
