import { afterEach, describe, expect, it } from 'vitest';
import type {
  AssembledResponse,
  LlmAdapter,
  LlmRequest,
  Message,
  StreamChunk,
  TokenUsage,
} from '../../src/internal.ts';
import {
  BlockAssembler,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  normalizeStream,
} from '../../src/internal.ts';
import type { FakeReply, FakeScript, FakeServer } from '../support/fake-openai-server.ts';

/** What the shared suite needs to know about one vendor adapter. */
export interface ConformanceTarget {
  name: string;
  /** The provider id the adapter registers under. */
  provider: string;
  model: string;
  /** The request path the adapter must POST to. */
  path: string;
  startServer(script?: FakeScript): Promise<FakeServer>;
  createAdapter(baseUrl: string, options?: { idleTimeoutMs?: number }): LlmAdapter;
  /** A usage object in the vendor's format and the disjoint counts it maps to. */
  usage: { wire: Record<string, unknown>; expected: TokenUsage };
  /** A reply with reasoning and one tool call. */
  reasoningReply: FakeReply;
  /** Checks that the follow-up request carries the reasoning the way the vendor requires. */
  expectReasoningReplay(body: Record<string, unknown>, first: Message): void;
  /** Error replies and the canonical code (and status) each must map to. */
  errorCases: { name: string; reply: FakeReply; code: string; status?: number }[];
  /** A mid-stream vendor error and the code it maps to. */
  streamErrorCase: { reply: FakeReply; code: string };
}

/** Streams one request through the adapter, normalized as the LLM runtime does, and assembles it. */
export async function collect(
  adapter: LlmAdapter,
  request: LlmRequest,
  signal: AbortSignal = new AbortController().signal,
  onChunk?: (chunk: StreamChunk) => void,
): Promise<{ chunks: StreamChunk[]; response: AssembledResponse }> {
  const chunks: StreamChunk[] = [];
  const assembler = new BlockAssembler();
  for await (const chunk of normalizeStream(() => adapter.stream(request, signal), signal)) {
    chunks.push(chunk);
    assembler.push(chunk);
    onChunk?.(chunk);
  }
  return { chunks, response: assembler.result() };
}

/** A request with a system prompt, one user prompt and optionally a tool. */
export function requestFor(
  target: ConformanceTarget,
  messages?: readonly Message[],
  withTool = true,
): LlmRequest {
  return {
    provider: target.provider,
    model: target.model,
    system: 'You are terse.',
    messages: messages ?? [createUserMessage('hello')],
    ...(withTool
      ? {
          tools: [
            {
              name: 'read_file',
              description: 'Read a file',
              parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
            },
          ],
        }
      : {}),
  };
}

function failureOf(response: AssembledResponse): {
  code: string;
  status?: number;
  providerRetryAfterMs?: number;
} {
  const finish = response.finish;
  if (finish.kind !== 'error' && finish.kind !== 'aborted')
    throw new Error(`expected a failure, got ${finish.kind}`);
  return finish.failure;
}

/** The adapter conformance suite: the same behaviour demanded of every vendor adapter, over real HTTP. */
export function adapterConformance(target: ConformanceTarget): void {
  describe(`${target.name} adapter conformance`, () => {
    let server: FakeServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });
    const start = async (script: FakeScript, options?: { idleTimeoutMs?: number }) => {
      server = await target.startServer(script);
      return { server, adapter: target.createAdapter(server.url, options) };
    };

    it('streams text deltas into one text block with a stop finish', async () => {
      const { server, adapter } = await start([{ text: ['Hel', 'lo ', 'world'] }]);
      const { chunks, response } = await collect(adapter, requestFor(target));
      expect(response.content).toEqual([{ type: 'text', text: 'Hello world' }]);
      expect(response.finish).toEqual({ kind: 'stop' });
      const deltas = chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.text);
      expect(deltas).toEqual(['Hel', 'lo ', 'world']);
      expect(chunks.at(-1)?.type).toBe('finish');
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]!.method).toBe('POST');
      expect(server.requests[0]!.path).toBe(target.path);
      expect((server.requests[0]!.body as { stream: unknown }).stream).toBe(true);
      expect(await server.requests[0]!.closed).toBe('finished');
    });

    it('round-trips reasoning: the follow-up request carries what the vendor requires', async () => {
      const { server, adapter } = await start([target.reasoningReply, { text: 'done' }]);
      const first = await collect(adapter, requestFor(target));
      expect(first.response.content.map((block) => block.type)).toEqual(['reasoning', 'tool-call']);
      expect(first.response.finish).toEqual({ kind: 'tool-calls' });
      const assistant = createAssistantMessage(first.response.content, {
        kind: 'model',
        provider: target.provider,
        model: target.model,
      });
      const call = first.response.content[1] as { id: string };
      const history = [
        createUserMessage('hello'),
        assistant,
        createToolResultMessage(call.id, [{ type: 'text', text: 'file body' }], false),
      ];
      const second = await collect(adapter, requestFor(target, history));
      expect(second.response.content).toEqual([{ type: 'text', text: 'done' }]);
      target.expectReasoningReplay(server.requests[1]!.body as Record<string, unknown>, assistant);
    });

    it('assembles two parallel tool calls with their raw argument strings', async () => {
      const { adapter } = await start([
        {
          toolCalls: [
            { id: 'call_a', name: 'read_file', arguments: '{"path": "a.txt"}', pieces: 3 },
            { id: 'call_b', name: 'read_file', arguments: '{"path":"b.txt" }', pieces: 4 },
          ],
        },
      ]);
      const { response } = await collect(adapter, requestFor(target));
      expect(response.finish).toEqual({ kind: 'tool-calls' });
      expect(response.content).toEqual([
        { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path": "a.txt"}' },
        { type: 'tool-call', id: 'call_b', name: 'read_file', arguments: '{"path":"b.txt" }' },
      ]);
    });

    it('yields the same chunks however the network splits the stream', async () => {
      const reply: FakeReply = {
        ...target.reasoningReply,
        text: ['Reading ', 'the ', 'file.'],
        usage: target.usage.wire,
      };
      const ways: FakeReply[] = [reply, { ...reply, pieceBytes: 0 }, { ...reply, pieceBytes: 7 }];
      const { adapter } = await start(ways);
      const results: StreamChunk[][] = [];
      for (let way = 0; way < ways.length; way++) {
        results.push((await collect(adapter, requestFor(target))).chunks);
      }
      expect(results[0]!.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.text)).toEqual([
        'Reading ',
        'the ',
        'file.',
      ]);
      expect(results[0]!.at(-1)?.type).toBe('finish');
      // Event by event (one write each), all in one read, and split mid-event into 7-byte reads.
      expect(results[1]).toEqual(results[0]);
      expect(results[2]).toEqual(results[0]);
    });

    it('reports usage before the finish', async () => {
      const { adapter } = await start([{ text: 'hi', usage: target.usage.wire }]);
      const { chunks, response } = await collect(adapter, requestFor(target));
      expect(response.usage).toEqual(target.usage.expected);
      const types = chunks.map((chunk) => chunk.type);
      expect(types.indexOf('usage')).toBe(types.length - 2);
    });

    for (const errorCase of target.errorCases) {
      it(`maps ${errorCase.name} to ${errorCase.code}`, async () => {
        const { adapter } = await start([errorCase.reply]);
        const { chunks, response } = await collect(adapter, requestFor(target));
        if (errorCase.reply.status !== undefined) expect(chunks).toHaveLength(1);
        const failure = failureOf(response);
        expect(failure.code).toBe(errorCase.code);
        if (errorCase.status !== undefined) expect(failure.status).toBe(errorCase.status);
        expect(response.finish.kind).toBe('error');
      });
    }

    it('carries a 429 Retry-After as providerRetryAfterMs', async () => {
      const { adapter } = await start([
        {
          status: 429,
          headers: { 'retry-after': '1' },
          error: { type: 'rate_limit_error', message: 'slow down' },
        },
      ]);
      const { response } = await collect(adapter, requestFor(target));
      expect(failureOf(response)).toMatchObject({
        code: 'RATE_LIMIT',
        status: 429,
        providerRetryAfterMs: 1000,
      });
    });

    it('maps a mid-stream vendor error event', async () => {
      const { adapter } = await start([target.streamErrorCase.reply]);
      const { response } = await collect(adapter, requestFor(target));
      expect(failureOf(response).code).toBe(target.streamErrorCase.code);
    });

    it('turns an empty response into EMPTY_RESPONSE', async () => {
      const { adapter } = await start([{}]);
      const { response } = await collect(adapter, requestFor(target));
      expect(failureOf(response).code).toBe('EMPTY_RESPONSE');
    });

    it('turns malformed SSE into a typed INVALID_RESPONSE error', async () => {
      const { adapter } = await start([
        { raw: 'data: {"this is": not json\n\n' },
        { raw: 'this is not an event stream at all\n\n' },
        { raw: '{"ok": true}', contentType: 'application/json' },
      ]);
      for (let attempt = 0; attempt < 3; attempt++) {
        const { response } = await collect(adapter, requestFor(target));
        expect(failureOf(response).code).toBe('INVALID_RESPONSE');
      }
    });

    it('turns a connection cut mid-stream into TRANSPORT, keeping what arrived', async () => {
      const { adapter } = await start([{ text: ['one ', 'two ', 'three'], cutAfterEvents: 4 }]);
      const { chunks, response } = await collect(adapter, requestFor(target));
      expect(chunks.some((chunk) => chunk.type === 'text-delta')).toBe(true);
      expect(failureOf(response).code).toBe('TRANSPORT');
    });

    it('turns a stream that ends cleanly before finishing into TRANSPORT', async () => {
      const { adapter } = await start([{ text: ['one ', 'two ', 'three'], endAfterEvents: 4 }]);
      const { chunks, response } = await collect(adapter, requestFor(target));
      expect(chunks.some((chunk) => chunk.type === 'text-delta')).toBe(true);
      expect(failureOf(response).code).toBe('TRANSPORT');
    });

    it('fails a stream that stalls past the idle timeout with TIMEOUT', async () => {
      const { server, adapter } = await start([{ text: ['one ', 'two'], stallAfterEvents: 2 }], {
        idleTimeoutMs: 300,
      });
      const { response } = await collect(adapter, requestFor(target));
      expect(failureOf(response).code).toBe('TIMEOUT');
      expect(await server.requests[0]!.closed).toBe('aborted');
    });

    it('fails with TIMEOUT when the headers never come', async () => {
      const { adapter } = await start(() => ({ text: 'never', delayMs: 0, stallAfterEvents: 0 }), {
        idleTimeoutMs: 300,
      });
      const { response } = await collect(adapter, requestFor(target));
      expect(failureOf(response).code).toBe('TIMEOUT');
    });

    it('stops the HTTP request when aborted mid-stream', async () => {
      const { server, adapter } = await start([{ text: ['a', 'b', 'c'], stallAfterEvents: 5 }]);
      const controller = new AbortController();
      const { chunks, response } = await collect(adapter, requestFor(target), controller.signal, (chunk) => {
        if (chunk.type === 'text-delta') controller.abort();
      });
      expect(response.finish).toEqual({
        kind: 'aborted',
        failure: { code: 'ABORTED', message: 'request aborted' },
      });
      expect(chunks.at(-1)?.type).toBe('finish');
      expect(await server.requests[0]!.closed).toBe('aborted');
    });

    it('turns a refused connection into TRANSPORT', async () => {
      const { server, adapter } = await start([]);
      await server.close();
      const { response } = await collect(adapter, requestFor(target));
      expect(failureOf(response).code).toBe('TRANSPORT');
    });
  });
}
