import { toFailure } from './llm-error.ts';
import type { LlmFailure } from './llm-error.ts';
import type { StreamChunk } from './stream-chunk.ts';

/** Wraps a chunk source so that every throw becomes a terminal `finish` (aborted when the signal is). */
export function normalizeStream(
  open: () => AsyncIterable<StreamChunk>,
  signal: AbortSignal,
): AsyncIterableIterator<StreamChunk> {
  return new NormalizedStream(open, signal);
}

const doneResult: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

// A hand-written iterator rather than an async generator: one promise per chunk instead of several,
// which is most of the per-chunk cost on the loop's hottest path. Semantics match the generator:
// the source opens on the first `next()`, closes (its `return()` awaited) when the consumer asks past a
// `finish` or returns early, and a throw before the finish becomes one terminal finish chunk.
export class NormalizedStream implements AsyncIterableIterator<StreamChunk> {
  readonly #open: () => AsyncIterable<StreamChunk>;
  readonly #signal: AbortSignal;
  #source: AsyncIterator<StreamChunk> | undefined;
  #finished = false;
  #done = false;

  // Bound on the first `next()`: the loop reads through `pull` and never needs them. No arrow closures
  // are made for the stream in its constructor: a stream holding closures created for it survived the
  // young generation's scavenges in W1 together with everything it reaches (the request, its history
  // snapshot, the source's chunks), which were then promoted and left for a full collection.
  #onResult: ((result: IteratorResult<StreamChunk>) => IteratorResult<StreamChunk, undefined>) | undefined;
  #onError: ((error: unknown) => IteratorResult<StreamChunk, undefined>) | undefined;

  constructor(open: () => AsyncIterable<StreamChunk>, signal: AbortSignal) {
    this.#open = open;
    this.#signal = signal;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamChunk, undefined>> {
    const pending = this.pull();
    if (!isThenable(pending)) return Promise.resolve(pending);
    // A native promise is passed through by Promise.resolve, not wrapped.
    return Promise.resolve(pending).then(
      (this.#onResult ??= this.accept.bind(this)),
      (this.#onError ??= this.reject.bind(this)),
    );
  }

  /**
   * The next result without a promise of this stream's own: a settled result, or the source's pending
   * one, whose value must go through `accept` and whose rejection through `reject`.
   */
  pull(): IteratorResult<StreamChunk, undefined> | PromiseLike<IteratorResult<StreamChunk>> {
    if (this.#done) return doneResult;
    if (this.#finished) return this.return();
    try {
      this.#source ??= this.#open()[Symbol.asyncIterator]();
      return this.#source.next();
    } catch (error) {
      return this.#fail(error);
    }
  }

  /** Normalizes a result the source answered a `pull` with. */
  accept(result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk, undefined> {
    return this.#accept(result);
  }

  /** Normalizes a rejection of the source's answer to a `pull`: a terminal finish chunk. */
  reject(error: unknown): IteratorResult<StreamChunk, undefined> {
    return this.#fail(error);
  }

  async return(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.#done) return doneResult;
    this.#done = true;
    const source = this.#source;
    if (source?.return !== undefined) {
      try {
        await source.return();
      } catch {
        // A source that fails while closing has nothing left to say: the stream already ended or was left.
      }
    }
    return doneResult;
  }

  #accept(result: IteratorResult<StreamChunk>): IteratorResult<StreamChunk, undefined> {
    if (result.done === true) {
      this.#done = true;
      return doneResult;
    }
    if (result.value.type === 'finish') this.#finished = true;
    return result;
  }

  #fail(error: unknown): IteratorResult<StreamChunk, undefined> {
    // The source is broken, not suspended: like for-await after a throw, it is not closed.
    this.#finished = true;
    this.#done = true;
    const failure = toFailure(error);
    return { done: false, value: { type: 'finish', reason: terminalReason(failure, this.#signal) } };
  }
}

function terminalReason(
  failure: LlmFailure,
  signal: AbortSignal,
): StreamChunk & { type: 'finish' } extends {
  reason: infer R;
}
  ? R
  : never {
  if (signal.aborted || failure.code === 'ABORTED') {
    return {
      kind: 'aborted',
      failure: signal.aborted ? { message: 'request aborted', code: 'ABORTED' } : failure,
    };
  }
  return { kind: 'error', failure };
}

function isThenable<T>(value: T | PromiseLike<unknown>): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Feeds every chunk of a stream to `onChunk`, in order, as `for await` would: a throw from `onChunk`
 * closes the stream (its `return()` awaited) and propagates. A normalized stream is read through its
 * pull protocol, which saves one promise per chunk on the loop's hottest path.
 */
export async function forEachChunk(
  stream: AsyncIterable<StreamChunk>,
  onChunk: (chunk: StreamChunk) => void,
): Promise<void> {
  if (!(stream instanceof NormalizedStream)) {
    for await (const chunk of stream) onChunk(chunk);
    return;
  }
  for (;;) {
    const pending = stream.pull();
    let result: IteratorResult<StreamChunk, undefined>;
    if (isThenable(pending)) {
      try {
        result = stream.accept(await pending);
      } catch (error) {
        result = stream.reject(error);
      }
    } else {
      result = pending;
    }
    if (result.done === true) return;
    try {
      onChunk(result.value);
    } catch (error) {
      await stream.return();
      throw error;
    }
  }
}
