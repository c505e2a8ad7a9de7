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

/** The token (for the event stream URL, which cannot carry headers). */
export function currentToken(): string {
  return token;
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
    throw new ApiError(
      0,
      'SERVER_UNREACHABLE',
      'the Rein server cannot be reached; is `rein web` still running?',
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // A non-JSON answer is reported below with the status.
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? response.statusText,
    );
  }
  return parsed as T;
}
