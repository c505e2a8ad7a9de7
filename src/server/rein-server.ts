import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from '../index.ts';
import { HarnessError } from '../index.ts';
import { apiRoutes, explainResumeFailure, seqParameter, workspaceMismatch } from './api-routes.ts';
import type { ApiContext } from './api-routes.ts';
import { webPaths } from './web-paths.ts';
import { closeAfterAnswer } from './close-after-answer.ts';
import { HttpError, describeFailure } from './http-error.ts';
import {
  checkHostAndOrigin,
  checkJsonBody,
  checkToken,
  isLoopbackName,
  readJsonBody,
} from './request-guard.ts';
import type { ReinServer, ReinServerOptions } from './server-options.ts';
import { SessionHub } from './session-hub.ts';
import { serveStatic } from './static-files.ts';

/** The Content-Security-Policy of every response: own scripts and styles only, no framing, no plugins. */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const streamPattern = /^\/api\/sessions\/([^/]+)\/stream$/;

/**
 * Starts the local server: loopback only, a per-launch token on every API call and event stream, Host
 * and Origin checks, JSON-only bodies, a strict CSP and no CORS; the JSON API and per-session event
 * streams over the harness's agents; and the built UI as static files.
 */
export async function startReinServer(options: ReinServerOptions): Promise<ReinServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackName(host === '::1' ? '[::1]' : host)) {
    throw new HarnessError('INVALID_OPTIONS', `the server binds to loopback only, not '${host}'`);
  }
  if (options.token !== undefined && options.token.length < 16) {
    throw new HarnessError('INVALID_OPTIONS', 'a token needs at least 16 characters');
  }
  const token = options.token ?? randomBytes(24).toString('base64url');
  const webRoot = options.webRoot ?? webPaths.dist;
  const { harness } = options;
  const hub = new SessionHub(harness, {
    ...(options.liveEventLimit !== undefined ? { liveLimit: options.liveEventLimit } : {}),
    ...(options.approverGraceMs !== undefined ? { approverGraceMs: options.approverGraceMs } : {}),
  });
  const resuming = new Map<string, Promise<Agent>>();
  // Checked before the session is opened, so a refused session is neither locked nor repaired here.
  const assertWorkspace = async (sessionId: string): Promise<void> => {
    if (options.workspace === undefined) return;
    // The header of the log a browser just opened, when there is one: not a second read of the file.
    const header = await hub.header(sessionId);
    const elsewhere = workspaceMismatch(options.workspace, header.cwd);
    if (elsewhere !== undefined) throw elsewhere;
  };
  const context: ApiContext = {
    harness,
    hub,
    options,
    live(sessionId) {
      const agent = harness.agents.get(sessionId);
      if (agent !== undefined) return Promise.resolve(agent);
      let pending = resuming.get(sessionId);
      if (pending === undefined) {
        pending = assertWorkspace(sessionId)
          .then(() => harness.resumeAgent(sessionId))
          .catch((error: unknown) => {
            throw explainResumeFailure(sessionId, error);
          })
          .finally(() => resuming.delete(sessionId));
        resuming.set(sessionId, pending);
      }
      return pending;
    },
  };
  let port = 0;

  const headersTimeout = options.headersTimeoutMs ?? 5_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeout);
  const server = createServer(
    {
      headersTimeout,
      requestTimeout,
      // Node checks these timeouts on an interval (30 s by default): check often enough to honour them.
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeout / 4))),
    },
    (request, response) => {
      setSecurityHeaders(response);
      handle(request, response).catch((error: unknown) => sendError(response, error, request));
    },
  );

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    checkHostAndOrigin(request, port);
    const url = new URL(request.url ?? '/', `http://${host === '::1' ? '[::1]' : host}:${port}`);
    const method = request.method ?? 'GET';
    if (!url.pathname.startsWith('/api/')) {
      if (method !== 'GET' && method !== 'HEAD')
        throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed here`);
      await serveStatic(webRoot, url.pathname, response, method === 'HEAD');
      return;
    }
    const stream = streamPattern.exec(url.pathname);
    checkToken(request, url, token, stream !== null && method === 'GET');
    response.setHeader('Cache-Control', 'no-store');
    if (stream !== null) {
      if (method !== 'GET') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'the event stream is GET only');
      await openStream(decodePathPart(stream[1]!), request, response, url);
      return;
    }
    const path = url.pathname;
    const matching = apiRoutes.filter((route) => route.pattern.test(path));
    if (matching.length === 0) throw new HttpError(404, 'NOT_FOUND', `no API at ${path}`);
    const route = matching.find((candidate) => candidate.method === method);
    if (route === undefined) {
      response.setHeader('Allow', matching.map((candidate) => candidate.method).join(', '));
      throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`);
    }
    let body: unknown;
    if (method === 'POST' || method === 'PUT' || method === 'DELETE') {
      const hasBody =
        request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0';
      if (method !== 'DELETE' || hasBody || request.headers['transfer-encoding'] !== undefined) {
        checkJsonBody(request);
        body = await readJsonBody(request, route.bodyLimit);
      }
    }
    const params = route.pattern.exec(path)!.slice(1).map(decodePathPart);
    const answer = await route.handler(context, params, body, url);
    sendJson(response, answer.status ?? 200, answer.body);
  }

  async function openStream(
    sessionId: string,
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
  ): Promise<void> {
    const lastEventId = request.headers['last-event-id'];
    const from =
      typeof lastEventId === 'string' && lastEventId !== ''
        ? seqParameter(lastEventId) + 1
        : seqParameter(url.searchParams.get('from'));
    // Fails with 404 before any stream bytes are sent; a stored log read here is the one the stream sends.
    await hub.prepare(sessionId);
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    response.write('retry: 1000\n\n');
    request.socket.setNoDelay(true);
    // `batch=1`: runs of durable events as `log-batch` messages; with `runs=1`, as `log-runs` messages
    // whose deltas are encoded as runs (the Web UI asks for both).
    await hub.attach(sessionId, response, from, {
      batch: url.searchParams.get('batch') === '1',
      deltaRuns: url.searchParams.get('runs') === '1',
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const urlHost = host === '::1' ? '[::1]' : host;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      options.signal?.removeEventListener('abort', onAbort);
      hub.dispose();
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  const onAbort = (): void => {
    void close();
  };
  if (options.signal?.aborted === true) await close();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  return { url: `http://${urlHost}:${port}/?token=${token}`, token, port, close };
}

function setSecurityHeaders(response: ServerResponse): void {
  response.setHeader('Content-Security-Policy', contentSecurityPolicy);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('X-Frame-Options', 'DENY');
  response.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  response.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.statusCode = status;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(text));
  response.end(text);
}

function sendError(response: ServerResponse, error: unknown, request: IncomingMessage): void {
  const { status, code, message } = describeFailure(error);
  if (status >= 500 && status !== 501 && status !== 503) console.error('[rein server]', error);
  if (response.headersSent) {
    response.end();
    return;
  }
  // The rest of an oversize body is never read: answer, then close the connection.
  if (status === 413) closeAfterAnswer(request, response);
  sendJson(response, status, { error: { code, message } });
}

/** Decodes one path segment; a malformed escape (`%zz`) is the client's error, a 400. */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    // URIError: the escape is not valid percent-encoding (or not UTF-8).
    throw new HttpError(
      400,
      'INVALID_PATH',
      `the path segment '${part.slice(0, 80)}' is not valid percent-encoding`,
    );
  }
}
