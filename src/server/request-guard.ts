import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.ts';

const loopbackNames = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Splits a `Host`-style value into a lowercase host name and an optional port. */
function splitHost(value: string): { name: string; port: string | undefined } {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value.trim().toLowerCase());
  if (match === null) return { name: '', port: undefined };
  return { name: match[1]!, port: match[2] };
}

/** True when a host name is a loopback name (DNS names other than `localhost` are refused: rebinding). */
export function isLoopbackName(name: string): boolean {
  return loopbackNames.has(name) || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/**
 * Guards every request: `Host` must be a loopback name for this port, `Origin` (when sent) must be this
 * server's own, and a cross-site fetch is refused. Throws HttpError 403.
 */
export function checkHostAndOrigin(request: IncomingMessage, port: number): void {
  const host = request.headers.host;
  if (host === undefined) throw new HttpError(403, 'FORBIDDEN_HOST', 'a Host header is required');
  const parsed = splitHost(host);
  if (!isLoopbackName(parsed.name) || (parsed.port !== undefined && parsed.port !== String(port))) {
    throw new HttpError(403, 'FORBIDDEN_HOST', `host '${host}' is not this server's loopback address`);
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !isOwnOrigin(origin, port)) {
    throw new HttpError(403, 'FORBIDDEN_ORIGIN', `origin '${origin}' may not call this server`);
  }
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site') {
    throw new HttpError(403, 'FORBIDDEN_ORIGIN', 'cross-site requests may not call this server');
  }
}

function isOwnOrigin(origin: string, port: number): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    // A malformed Origin (including the opaque "null") is never this server's own.
    return false;
  }
  return url.protocol === 'http:' && isLoopbackName(url.hostname) && url.port === String(port);
}

/**
 * Checks the launch token: `Authorization: Bearer …` or `X-Rein-Token`, or (only where a browser cannot
 * set headers, i.e. EventSource) the `token` query parameter. Throws HttpError 401.
 */
export function checkToken(request: IncomingMessage, url: URL, token: string, allowQuery: boolean): void {
  let given: string | undefined;
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && authorization.startsWith('Bearer ')) {
    given = authorization.slice('Bearer '.length).trim();
  }
  const header = request.headers['x-rein-token'];
  if (given === undefined && typeof header === 'string') given = header;
  if (given === undefined && allowQuery) given = url.searchParams.get('token') ?? undefined;
  if (given === undefined) throw new HttpError(401, 'UNAUTHORIZED', 'this API needs the launch token');
  if (!sameSecret(given, token)) throw new HttpError(401, 'UNAUTHORIZED', 'the token is not valid');
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Requires a JSON body type on a request that carries a body (HttpError 415). */
export function checkJsonBody(request: IncomingMessage): void {
  const type = request.headers['content-type'];
  const mediaType = typeof type === 'string' ? type.split(';', 1)[0]!.trim().toLowerCase() : '';
  if (mediaType !== 'application/json') {
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'request bodies must be application/json');
  }
}

/** The largest request body the API reads, in bytes. */
export const maxRequestBodyBytes = 1_048_576;

/** HttpError 413 for a body over `limit` bytes (the server then closes the connection unread). */
export function bodyTooLarge(limit: number): HttpError {
  return new HttpError(413, 'BODY_TOO_LARGE', `request bodies are limited to ${limit} bytes`);
}

/**
 * Reads and parses a JSON body of at most `limit` bytes (HttpError 400 / 413). A declared
 * `Content-Length` over the limit is refused before the body is read; a body that grows over the limit
 * is refused at the chunk that crosses it. The rest of a refused body is left unread and its request
 * paused, not destroyed: leaving a `for await` over it would, and Node then takes the socket away from
 * the request (`request.socket` is null) while the 413 is still to be sent on it.
 */
export async function readJsonBody(request: IncomingMessage, limit = maxRequestBodyBytes): Promise<unknown> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    claimUnread(request);
    throw bodyTooLarge(limit);
  }
  const text = (await readBody(request, limit)).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // The parser's message is not part of the contract; the code is.
    throw new HttpError(400, 'INVALID_JSON', 'the request body is not valid JSON');
  }
}

/**
 * Stops a request whose body will not be read. Node's server drains ("dumps") the body of a request
 * nobody called `read()` on once the answer is sent, at full speed; one `read()` (of what is already
 * buffered, if anything) opts out, and the paused request then stops its socket when its buffer is full.
 */
function claimUnread(request: IncomingMessage): void {
  request.pause();
  request.read();
}

/** The body's bytes, rejecting with 413 (and reading no further) at the chunk that crosses `limit`. */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (): void => {
      // Paused before the listener goes: a flowing stream without a 'data' listener drops its data.
      request.pause();
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        settle();
        reject(bodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      settle();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error): void => {
      settle();
      reject(error);
    };
    const onClose = (): void => {
      settle();
      reject(new HttpError(400, 'INCOMPLETE_BODY', 'the connection closed before the request body ended'));
    };
    if (request.destroyed) {
      onClose();
      return;
    }
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}
