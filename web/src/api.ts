/** An API failure with the server's stable code. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

const storageKey = 'rein.token';

/** Takes the launch token from `?token=` (then removes it from the address bar) or from this tab's storage. */
export function takeToken(): string {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl !== null && fromUrl !== '') {
    sessionStorage.setItem(storageKey, fromUrl);
    url.searchParams.delete('token');
    // The token must not linger in history, screenshots or a copied address.
    window.history.replaceState(null, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return sessionStorage.getItem(storageKey) ?? '';
}

let token = '';

/** Sets the token every call sends. */
export function setToken(value: string): void {
  token = value;
}

/**
 * Opens a streaming GET (the session's event stream) with the token in its header; resolves with the
 * answer once its headers are in, and throws ApiError with the server's code when it is refused.
 */
export async function openStream(path: string, signal: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      cache: 'no-store',
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    // fetch rejects only when the server cannot be reached (or the caller aborted, above).
    throw unreachable();
  }
  if (!response.ok) throw failure(response, await response.text());
  return response;
}

function unreachable(): ApiError {
  return new ApiError(
    0,
    'SERVER_UNREACHABLE',
    'the Rein server cannot be reached; is `rein web` still running?',
  );
}

/** An answer's JSON, or undefined when it is empty or not JSON (a refusal is then reported by its status). */
function parseAnswer(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    // Not JSON (a proxy's page, say): nothing to read from it.
    return undefined;
  }
}

/** The ApiError of a refused answer: the server's `{ error: { code, message } }`, or its HTTP status. */
function failure(response: Response, text: string): ApiError {
  const error = (parseAnswer(text) as { error?: { code?: string; message?: string } } | undefined)?.error;
  return new ApiError(
    response.status,
    error?.code ?? `HTTP_${response.status}`,
    error?.message ?? response.statusText,
  );
}

/** Calls the JSON API; throws ApiError with the server's code on failure. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch {
    // fetch rejects only when the server cannot be reached.
    throw unreachable();
  }
  const text = await response.text();
  if (!response.ok) throw failure(response, text);
  return parseAnswer(text) as T;
}
