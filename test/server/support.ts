import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { Agent, Harness, ModelInfo, SessionStore, Tool } from '../../src/index.ts';
import { createHarness, defineTool } from '../../src/index.ts';
import type { ReinServer, ReinServerOptions } from '../../src/server/index.ts';
import { startReinServer } from '../../src/server/index.ts';
import type { ScriptedTurn } from '../../src/testing/index.ts';
import { ScriptedProvider, eventTypes } from '../../src/testing/index.ts';

/** A harness over a scripted model, a `read_file` tool that asks for approval, and a running server. */
export interface ServerFixture {
  harness: Harness;
  model: ScriptedProvider;
  server: ReinServer;
  /** Calls the JSON API with the token (unless `token: null`), returning status and parsed body. */
  api(method: string, path: string, body?: unknown, options?: RawOptions): Promise<RawResponse>;
  close(): Promise<void>;
}

/** Options of one raw HTTP request. */
export interface RawOptions {
  headers?: Record<string, string>;
  /** The token to send as a Bearer header; null sends none. */
  token?: string | null;
  /** A raw body (sent as is, with the given headers). */
  rawBody?: string;
}

/** A raw HTTP answer. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: unknown;
}

/** The read-only tool of the running example. */
export function readFileTool(
  contents: (path: string) => string = (path) => `contents of ${path}`,
): Tool<never> {
  return defineTool<{ path: string }>({
    name: 'read_file',
    description: 'Read a file',
    effect: 'read',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
    isConcurrencySafe: () => true,
    execute: (args) => contents(args.path),
  }) as Tool<never>;
}

/** Starts a harness and a server; `read_file` asks a human (the approval dialog). */
export async function serverFixture(
  responses: ScriptedTurn[] = [],
  options: {
    tools?: Tool<never>[];
    server?: Partial<ReinServerOptions>;
    fallback?: ScriptedTurn;
    store?: SessionStore;
    /** More scripted models beside `test-model` and `other-model`. */
    models?: Record<string, ModelInfo>;
  } = {},
): Promise<ServerFixture> {
  const model = new ScriptedProvider({
    responses,
    models: {
      'test-model': {
        label: 'Scripted test model',
        contextWindow: 64_000,
        pricing: { input: 1, output: 2 },
        images: true,
      },
      'other-model': { label: 'Another scripted model', contextWindow: 32_000 },
      ...options.models,
    },
    ...(options.fallback !== undefined ? { fallback: options.fallback } : {}),
  });
  const harness = createHarness({
    providers: [model],
    tools: options.tools ?? [readFileTool()],
    defaultModel: { provider: 'scripted', model: 'test-model' },
    ...(options.store !== undefined ? { store: options.store } : {}),
  });
  harness.hooks.on('tools/pre-execute', async ({ call }, next) =>
    call.name === 'read_file' ? { kind: 'ask', reason: 'reading needs approval' } : next(),
  );
  const server = await startReinServer({ harness, port: 0, ...options.server });
  const api = (method: string, path: string, body?: unknown, raw: RawOptions = {}): Promise<RawResponse> => {
    const headers: Record<string, string> = { ...(raw.headers ?? {}) };
    const token = raw.token === undefined ? server.token : raw.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let payload = raw.rawBody;
    if (payload === undefined && body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    return rawRequest(server.port, method, path, headers, payload);
  };
  return {
    harness,
    model,
    server,
    api,
    close: async () => {
      await server.close();
      await harness.dispose();
    },
  };
}

/** Sends one HTTP request to the loopback server with exactly these headers. */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            // Not every answer is JSON (static files); `text` has it.
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    if (body !== undefined) request.write(body);
    request.end();
  });
}

/** One parsed server-sent event. */
export interface SseFrame {
  id?: string;
  event: string;
  data: unknown;
}

/** An open event stream that collects frames. */
export interface SseReader {
  frames: SseFrame[];
  /** Resolves with the first frame (from the start) matching the predicate. */
  waitFor(predicate: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  close(): void;
  /** Stops reading from the socket (a slow client), and starts again. */
  pause(): void;
  resume(): void;
  status: number;
}

/** Opens `/api/sessions/:id/stream` with the token in the query (as EventSource does) and parses frames. */
export function openStream(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const frames: SseFrame[] = [];
    const waiters: { predicate: (frame: SseFrame) => boolean; resolve: (frame: SseFrame) => void }[] = [];
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        headers: { host: `127.0.0.1:${port}`, accept: 'text/event-stream', ...headers },
      },
      (response) => {
        // Line-based parsing over pieces, so a multi-megabyte frame costs linear time.
        let partial: string[] = [];
        let frame: SseFrame = { event: 'message', data: undefined };
        let data: string | undefined;
        const onLine = (line: string): void => {
          if (line !== '') {
            if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) data = line.slice(6);
            return;
          }
          const done = frame;
          const text = data;
          frame = { event: 'message', data: undefined };
          data = undefined;
          if (text === undefined) return;
          done.data = JSON.parse(text) as unknown;
          frames.push(done);
          for (const waiter of [...waiters]) {
            if (waiter.predicate(done)) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve(done);
            }
          }
        };
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          let start = 0;
          for (;;) {
            const newline = chunk.indexOf('\n', start);
            if (newline < 0) {
              partial.push(chunk.slice(start));
              break;
            }
            const line = partial.join('') + chunk.slice(start, newline);
            partial = [];
            start = newline + 1;
            onLine(line);
          }
        });
        response.on('error', () => {
          // The test closed the stream.
        });
        resolve({
          frames,
          status: response.statusCode ?? 0,
          waitFor(predicate, timeoutMs = 10_000) {
            const found = frames.find(predicate);
            if (found !== undefined) return Promise.resolve(found);
            return new Promise((done, fail) => {
              const timer = setTimeout(() => fail(new Error('no matching frame in time')), timeoutMs);
              waiters.push({
                predicate,
                resolve: (frame) => {
                  clearTimeout(timer);
                  done(frame);
                },
              });
            });
          },
          close() {
            request.destroy();
          },
          pause() {
            response.pause();
          },
          resume() {
            response.resume();
          },
        });
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** The types of a log without chunks. */
export function typesOf(agent: Agent): string[] {
  return eventTypes(agent.session, { chunks: false });
}
