import type { Disposer, HookBus, HookScope, WaterfallEvent } from '../hooks/index.ts';
import { LlmError, toFailure } from './llm-error.ts';
import type { LlmFailure } from './llm-error.ts';
import type { LlmCallConfig, LlmRequest, ModelInfo } from './llm-request.ts';
import { defaultRetryPolicy } from './retry-policy.ts';
import type { RetryPolicy } from './retry-policy.ts';
import type { StreamChunk } from './stream-chunk.ts';

/** Maps one vendor's wire protocol to the stream vocabulary. */
export interface LlmAdapter {
  /** The provider id routes use, e.g. `deepseek`, `openai`, `anthropic`, `scripted`. */
  readonly provider: string;
  /** This route's retry policy; `defaultRetryPolicy` when omitted. */
  readonly retryPolicy?: RetryPolicy | undefined;
  /** The models this provider is configured for, for listings and error messages. */
  listModels?(): readonly string[];
  /** Facts about a model, or undefined when unknown. */
  describeModel?(model: string): ModelInfo | undefined;
  /** Validates and completes a call config (adapter defaults); throws an LlmError to refuse it. */
  prepare?(config: LlmCallConfig): LlmCallConfig;
  /** Streams one request; may throw or end with an in-band error finish. */
  stream(request: LlmRequest, signal: AbortSignal): AsyncIterable<StreamChunk>;
}

/** A call config resolved against its adapter. */
export interface PreparedRoute {
  readonly config: LlmCallConfig;
  readonly adapter: LlmAdapter | undefined;
  readonly retryPolicy: RetryPolicy | undefined;
  readonly model: ModelInfo | undefined;
}

/** Payload of the `llm/stream` waterfall. */
export interface LlmStreamPayload {
  readonly request: LlmRequest;
  readonly route: PreparedRoute | undefined;
  readonly signal: AbortSignal;
}

declare module '../hooks/hook-event-map.ts' {
  interface HookEventMap {
    'llm/stream': WaterfallEvent<LlmStreamPayload, AsyncIterable<StreamChunk>>;
  }
}

/** The dispatch modes of the `llm/*` events. */
export const llmEventModes = { 'llm/stream': 'waterfall' } as const;

/** The adapter registry and the entry point of every model call. */
export class LlmService {
  readonly #adapters = new Map<string, LlmAdapter>();
  readonly #prepared = new WeakMap<LlmCallConfig, PreparedRoute>();

  readonly hooks: HookBus;

  constructor(hooks: HookBus) {
    this.hooks = hooks;
    hooks.declare(llmEventModes);
  }

  /** Registers an adapter under its provider id, replacing none; returns a disposer. */
  register(adapter: LlmAdapter): Disposer {
    if (this.#adapters.has(adapter.provider)) {
      throw new LlmError({
        code: 'INVALID_REQUEST',
        message: `provider '${adapter.provider}' is already registered`,
      });
    }
    this.#adapters.set(adapter.provider, adapter);
    return () => {
      if (this.#adapters.get(adapter.provider) === adapter) this.#adapters.delete(adapter.provider);
    };
  }

  /** The adapter for a provider id, if registered. */
  adapter(provider: string): LlmAdapter | undefined {
    return this.#adapters.get(provider);
  }

  /** Every registered provider id. */
  providers(): string[] {
    return [...this.#adapters.keys()];
  }

  /** Resolves a config against its adapter; throws LlmError `NO_ADAPTER` when the provider is unknown. */
  prepare(config: LlmCallConfig): PreparedRoute {
    const adapter = this.#adapters.get(config.provider);
    if (adapter === undefined) {
      const known = this.providers();
      throw new LlmError({
        code: 'NO_ADAPTER',
        message: `no provider '${config.provider}' is configured${known.length > 0 ? ` (configured: ${known.join(', ')})` : ''}`,
      });
    }
    // A frozen config (the loop's seed, reused step after step) resolves once per adapter.
    const cached = this.#prepared.get(config);
    if (cached !== undefined && cached.adapter === adapter) return cached;
    const prepared = adapter.prepare?.(config) ?? config;
    const route: PreparedRoute = Object.freeze({
      config: Object.freeze({ ...prepared }),
      adapter,
      retryPolicy: adapter.retryPolicy ?? defaultRetryPolicy,
      model: adapter.describeModel?.(prepared.model),
    });
    if (Object.isFrozen(config)) this.#prepared.set(config, route);
    return route;
  }

  /**
   * Streams a request through the `llm/stream` waterfall. The built-in inner step looks the adapter up
   * and normalizes every throw from lookup, dispatch or iteration into a terminal finish chunk; throws
   * from middleware propagate. Nothing is yielded after a finish.
   */
  stream(
    request: LlmRequest,
    options: { signal: AbortSignal; route?: PreparedRoute | undefined; scope?: HookScope },
  ): Promise<AsyncIterable<StreamChunk>> {
    const { signal } = options;
    const payload: LlmStreamPayload = { request, route: options.route, signal };
    return this.hooks.waterfall(
      'llm/stream',
      payload,
      () => normalizeStream(() => this.#dispatch(request, options.route, signal), signal),
      options.scope,
    );
  }

  #dispatch(
    request: LlmRequest,
    route: PreparedRoute | undefined,
    signal: AbortSignal,
  ): AsyncIterable<StreamChunk> {
    const adapter = route?.adapter ?? this.prepare(request).adapter;
    if (adapter === undefined)
      throw new LlmError({ code: 'NO_ADAPTER', message: `no adapter for '${request.provider}'` });
    return adapter.stream(request, signal);
  }
}

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
class NormalizedStream implements AsyncIterableIterator<StreamChunk> {
  readonly #open: () => AsyncIterable<StreamChunk>;
  readonly #signal: AbortSignal;
  #source: AsyncIterator<StreamChunk> | undefined;
  #finished = false;
  #done = false;

  readonly #onResult: (result: IteratorResult<StreamChunk>) => IteratorResult<StreamChunk, undefined>;
  readonly #onError: (error: unknown) => IteratorResult<StreamChunk, undefined>;

  constructor(open: () => AsyncIterable<StreamChunk>, signal: AbortSignal) {
    this.#open = open;
    this.#signal = signal;
    // Bound once per stream, as member assignments (which the keep-names loader leaves unwrapped).
    this.#onResult = (result) => this.#accept(result);
    this.#onError = (error) => this.#fail(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamChunk, undefined>> {
    if (this.#done) return Promise.resolve(doneResult);
    if (this.#finished) return this.return();
    let pending: Promise<IteratorResult<StreamChunk>>;
    try {
      this.#source ??= this.#open()[Symbol.asyncIterator]();
      pending = this.#source.next();
    } catch (error) {
      return Promise.resolve(this.#fail(error));
    }
    return pending.then(this.#onResult, this.#onError);
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
