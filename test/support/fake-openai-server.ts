import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** One tool call a fake reply streams; `pieces` splits its arguments over that many deltas. */
export interface FakeToolCall {
  id: string;
  name: string;
  arguments: string;
  pieces?: number;
}

/**
 * One scripted HTTP response, vendor-neutral: each fake server renders it in its vendor's real wire
 * format (Chat Completions chunks, or Messages API events).
 */
export interface FakeReply {
  /** Reasoning text (DeepSeek `reasoning_content`, Anthropic thinking), or its deltas. */
  reasoning?: string | readonly string[];
  /** Anthropic: the thinking block's signature. */
  signature?: string;
  /** Anthropic: a redacted thinking block's opaque data, streamed before everything else. */
  redactedThinking?: string;
  /** Answer text, or its deltas. */
  text?: string | readonly string[];
  toolCalls?: readonly FakeToolCall[];
  /** The vendor's raw usage object. */
  usage?: Record<string, unknown>;
  /** The vendor's raw finish (`finish_reason` / `stop_reason`); derived from the content when omitted. */
  finishReason?: string;
  /** A non-200 status: the body is the vendor's error JSON built from `error`. */
  status?: number;
  /** Response headers (e.g. `retry-after`). */
  headers?: Readonly<Record<string, string>>;
  /** The error of a non-200 reply. */
  error?: { type?: string; message: string; code?: string };
  /** An error the vendor reports inside the stream, after the content. */
  streamError?: { type?: string; message: string; code?: string | number };
  /** A raw body served verbatim instead of a rendering. */
  raw?: string;
  /** The content type of a raw body; `text/event-stream` by default. */
  contentType?: string;
  /** An SSE transcript under `test/fixtures/providers/`, served verbatim. */
  fixture?: string;
  /** Destroys the socket after this many events. */
  cutAfterEvents?: number;
  /** Ends the response cleanly after this many events, before the vendor's finish. */
  endAfterEvents?: number;
  /** Stops writing after this many events and keeps the connection open. */
  stallAfterEvents?: number;
  /** Waits before each event. */
  delayMs?: number;
  /** OpenAI: leave out the `data: [DONE]` terminator. */
  omitDone?: boolean;
  /**
   * Writes the whole rendered stream in pieces of this many bytes, each after the previous one was
   * flushed and a timer tick passed, so events arrive split across the client's reads; 0 writes it all
   * at once. Unset: one write per event.
   */
  pieceBytes?: number;
}

/** One request the fake server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: unknown;
  /** The request body exactly as it arrived, for byte-level comparisons. */
  raw: string;
  /** Resolves `finished` when the whole response was written, `aborted` when the client hung up first. */
  closed: Promise<'finished' | 'aborted'>;
}

/** A running fake vendor server on loopback. */
export interface FakeServer {
  /** The base URL to configure the adapter with. */
  url: string;
  requests: RecordedRequest[];
  /** Appends replies to the script. */
  push(...replies: FakeReply[]): void;
  close(): Promise<void>;
}

/** A script: replies in order, or a function of the request number. */
export type FakeScript = readonly FakeReply[] | ((request: number, body: unknown) => FakeReply);

/** Renders a reply into the SSE frames of a vendor (each frame a complete `event:`/`data:` block). */
export type FrameRenderer = (reply: FakeReply, body: unknown) => string[];

const fixtureDirectory = join(import.meta.dirname, '..', 'fixtures', 'providers');

/** Reads an SSE transcript fixture and splits it into frames. */
export function fixtureFrames(name: string): string[] {
  const text = readFileSync(join(fixtureDirectory, name), 'utf8');
  return text
    .split(/\n\n/)
    .filter((frame) => frame.trim() !== '')
    .map((frame) => `${frame}\n\n`);
}

/** Starts a loopback server that answers each request with the next scripted reply, rendered by `render`. */
export async function startFakeVendorServer(
  script: FakeScript,
  render: FrameRenderer,
  errorBody: (reply: FakeReply) => unknown,
  basePath: string,
): Promise<FakeServer> {
  const queue: FakeReply[] = typeof script === 'function' ? [] : [...script];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((request, response) => {
    void handle(request, response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // A non-JSON request body is recorded as text.
    }
    let settle: (value: 'finished' | 'aborted') => void = () => undefined;
    const closed = new Promise<'finished' | 'aborted'>((resolve) => (settle = resolve));
    response.on('close', () => settle(response.writableFinished ? 'finished' : 'aborted'));
    const number = requests.length;
    requests.push({
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body,
      raw: text,
      closed,
    });
    const reply = typeof script === 'function' ? script(number, body) : queue.shift();
    if (reply === undefined) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { message: `fake server: no reply scripted for request ${number + 1}` } }),
      );
      return;
    }
    if (reply.status !== undefined && reply.status !== 200) {
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      response.end(reply.raw ?? JSON.stringify(errorBody(reply)));
      return;
    }
    response.writeHead(200, {
      'content-type': reply.contentType ?? 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    if (reply.raw !== undefined) {
      response.end(reply.raw);
      return;
    }
    const frames = reply.fixture !== undefined ? fixtureFrames(reply.fixture) : render(reply, body);
    if (reply.pieceBytes !== undefined) {
      const whole = Buffer.from(frames.join(''), 'utf8');
      const size = reply.pieceBytes > 0 ? reply.pieceBytes : whole.length;
      for (let offset = 0; offset < whole.length; offset += size) {
        if (response.destroyed) return;
        await new Promise((resolve) => response.write(whole.subarray(offset, offset + size), resolve));
        if (size < whole.length) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      response.end();
      return;
    }
    let flushed: Promise<unknown> = Promise.resolve();
    for (let index = 0; index < frames.length; index++) {
      if (reply.cutAfterEvents === index) {
        // Cut only once what came before reached the client, so it sees a prefix and then the cut.
        await flushed;
        response.socket?.destroy();
        return;
      }
      if (reply.stallAfterEvents === index) return;
      if (reply.endAfterEvents === index) break;
      if (reply.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      if (response.destroyed) return;
      flushed = new Promise((resolve) => response.write(frames[index], resolve));
    }
    if (reply.stallAfterEvents === frames.length) return;
    response.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    requests,
    push: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Splits text into deltas: given deltas are kept, a string is one delta. */
export function deltas(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** Splits a string into `pieces` roughly equal parts (at least one). */
export function split(text: string, pieces = 1): string[] {
  const count = Math.max(1, Math.min(pieces, text.length || 1));
  const size = Math.ceil(text.length / count);
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts.length > 0 ? parts : [''];
}

function openAIFrames(reply: FakeReply, body: unknown): string[] {
  const model = (body as { model?: string }).model ?? 'fake-model';
  const frame = (delta: Record<string, unknown>, finish: string | null = null): string =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
  const frames: string[] = [frame({ role: 'assistant', content: '' })];
  for (const text of deltas(reply.reasoning)) frames.push(frame({ reasoning_content: text }));
  for (const text of deltas(reply.text)) frames.push(frame({ content: text }));
  (reply.toolCalls ?? []).forEach((call, index) => {
    frames.push(
      frame({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const piece of split(call.arguments, call.pieces ?? 2)) {
      frames.push(frame({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  if (reply.streamError !== undefined) {
    frames.push(`data: ${JSON.stringify({ error: reply.streamError })}\n\n`);
    return frames;
  }
  const finish = reply.finishReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
  frames.push(frame({}, finish));
  if (reply.usage !== undefined) {
    frames.push(
      `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: reply.usage })}\n\n`,
    );
  }
  if (reply.omitDone !== true) frames.push('data: [DONE]\n\n');
  return frames;
}

function openAIError(reply: FakeReply): unknown {
  const error = reply.error ?? { message: `HTTP ${reply.status ?? 500}` };
  return {
    error: { message: error.message, type: error.type ?? 'api_error', param: null, code: error.code ?? null },
  };
}

/**
 * Starts a loopback server speaking the Chat Completions streaming wire format (OpenAI, DeepSeek and
 * compatible servers) at `{url}/chat/completions`, answering each request with the next scripted reply.
 */
export function startFakeOpenAIServer(script: FakeScript = []): Promise<FakeServer> {
  return startFakeVendorServer(script, openAIFrames, openAIError, '/v1');
}
