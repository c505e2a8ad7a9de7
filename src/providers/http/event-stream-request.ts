import type { EventSourceMessage, createParser as CreateParser } from 'eventsource-parser';
import { lazyModule } from '../../llm/lazy-module.ts';
import { LlmError, errorChainText, isAbortError } from '../../llm/index.ts';
import { failureFromResponse } from './http-failure.ts';

const eventSourceParser = lazyModule<{ createParser: typeof CreateParser }>('eventsource-parser');

/** One streaming POST: where, with which headers and JSON body, and how long the stream may stay silent. */
export interface EventStreamRequest {
  /** The provider id, used in error messages. */
  provider: string;
  url: string;
  headers: Readonly<Record<string, string>>;
  body: unknown;
  signal: AbortSignal;
  /** Longest silence allowed while waiting for headers or between reads; then the call fails `TIMEOUT`. */
  idleTimeoutMs: number;
  /** The fetch implementation; the global one by default. */
  fetch?: typeof fetch | undefined;
}

/** A parsed server-sent event. */
export type ServerSentEvent = EventSourceMessage;

// Why the internal controller was aborted, so a stall reads as TIMEOUT and a caller's Stop as ABORTED.
class IdleTimeout extends Error {
  constructor(milliseconds: number) {
    super(`no data from the provider for ${milliseconds} ms`);
    this.name = 'IdleTimeout';
  }
}

/**
 * POSTs a JSON body and yields the server-sent events of the response, parsed by `eventsource-parser`,
 * in batches: the events completed by one read of the network, in order (never an empty batch), so a
 * consumer pays one asynchronous hand-over per read rather than per event. Non-success statuses become
 * canonical LlmErrors (with Retry-After and request id); connection failures `TRANSPORT`; silence past
 * the idle timeout `TIMEOUT`; the caller's abort `ABORTED`. Leaving the iteration early, for any
 * reason, aborts the HTTP request so the connection is released.
 */
export async function* streamServerSentEventBatches(
  request: EventStreamRequest,
): AsyncGenerator<readonly ServerSentEvent[], void, undefined> {
  const { provider, signal, idleTimeoutMs } = request;
  if (signal.aborted) throw abortedError();
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new IdleTimeout(idleTimeoutMs)), idleTimeoutMs);
  };
  const translate = (error: unknown): LlmError => {
    if (error instanceof LlmError) return error;
    if (signal.aborted) return abortedError();
    if (controller.signal.reason instanceof IdleTimeout) {
      return new LlmError({ code: 'TIMEOUT', message: `${provider}: ${controller.signal.reason.message}` });
    }
    if (isAbortError(error)) return abortedError();
    return new LlmError(
      { code: 'TRANSPORT', message: `${provider}: connection failed: ${errorChainText(error)}` },
      { cause: error },
    );
  };
  try {
    arm();
    let response: Response;
    try {
      response = await (request.fetch ?? fetch)(request.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...request.headers },
        body: JSON.stringify(request.body),
        signal: controller.signal,
      });
    } catch (error) {
      throw translate(error);
    }
    if (!response.ok) {
      let text = '';
      try {
        arm();
        text = await response.text();
      } catch {
        // The error body could not be read in full; the status alone still classifies the failure.
        if (signal.aborted) throw abortedError();
      }
      throw new LlmError(failureFromResponse(provider, response.status, response.headers, text));
    }
    const type = response.headers.get('content-type') ?? '';
    if (response.body === null) {
      throw new LlmError({ code: 'INVALID_RESPONSE', message: `${provider}: the response has no body` });
    }
    if (!/text\/event-stream/i.test(type)) {
      arm();
      const text = await response.text().catch((error: unknown) => {
        throw translate(error);
      });
      throw new LlmError({
        code: 'INVALID_RESPONSE',
        status: response.status,
        message: `${provider}: expected an event stream but got '${type || 'no content type'}': ${text.trim().slice(0, 300)}`,
      });
    }
    const disarm = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
    yield* readEvents(response.body, provider, { arm, disarm }, translate);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    // Ending early (consumer stopped, error, finish seen) must not leave the socket streaming.
    if (!controller.signal.aborted) controller.abort(new Error('stream closed by the client'));
  }
}

// Errors eventsource-parser reports for lines the SSE spec tells clients to ignore.
const ignorableParseErrors: ReadonlySet<string> = new Set(['unknown-field', 'invalid-retry']);

async function* readEvents(
  body: ReadableStream<Uint8Array>,
  provider: string,
  timer: { arm: () => void; disarm: () => void },
  translate: (error: unknown) => LlmError,
): AsyncGenerator<readonly ServerSentEvent[], void, undefined> {
  // The events of the current read; handed over whole and replaced, never emptied in place.
  let events: ServerSentEvent[] = [];
  let parseFailure: LlmError | undefined;
  let dispatched = 0;
  // The first line the spec says to ignore, kept to tell "not an event stream at all" from vendor extras.
  let ignoredLine: string | undefined;
  const parser = eventSourceParser().createParser({
    onEvent: (event) => {
      dispatched++;
      // The spec dispatches nothing for an empty data buffer (a bare `data` line, say).
      if (event.data !== '') events.push(event);
    },
    onError: (error) => {
      // Per the WHATWG rules, unknown fields (`x-vendor: 1`, a bare word) and a non-numeric `retry`
      // are ignored; anything else the parser reports is a broken stream.
      if (ignorableParseErrors.has(error.type)) {
        ignoredLine ??= error.line ?? error.field ?? '';
        return;
      }
      parseFailure ??= new LlmError(
        { code: 'INVALID_RESPONSE', message: `${provider}: malformed event stream: ${error.message}` },
        { cause: error },
      );
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let endsWithCarriageReturn = false;
  try {
    for (;;) {
      timer.arm();
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        throw translate(error);
      }
      // The idle clock runs only while waiting on the network, never while the consumer works.
      timer.disarm();
      if (read.done) {
        // A CR-only stream ends on a CR the parser still holds back (it might start a CRLF): end the line.
        const rest = decoder.decode();
        parser.feed(endsWithCarriageReturn && rest === '' ? '\n' : rest);
        parser.reset({ consume: true });
      } else {
        const text = decoder.decode(read.value, { stream: true });
        if (text !== '') endsWithCarriageReturn = text.endsWith('\r');
        parser.feed(text);
      }
      if (parseFailure !== undefined) throw parseFailure;
      if (events.length > 0) {
        const batch = events;
        events = [];
        yield batch;
      }
      if (read.done) {
        if (dispatched === 0 && ignoredLine !== undefined) {
          throw new LlmError({
            code: 'INVALID_RESPONSE',
            message: `${provider}: the response is not an event stream: ${ignoredLine.slice(0, 200)}`,
          });
        }
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function abortedError(): LlmError {
  return new LlmError({ code: 'ABORTED', message: 'request aborted' });
}
