import type { Disposer, HookBus, HookScope, WaterfallEvent } from '../hooks/index.ts';
import { LlmError } from './llm-error.ts';
import type { LlmCallConfig, LlmRequest, ModelInfo } from './llm-request.ts';
import { imageReadyRequest } from './image-ready-request.ts';
import { defaultRetryPolicy } from './retry-policy.ts';
import type { RetryPolicy } from './retry-policy.ts';
import type { StreamChunk } from './stream-chunk.ts';
import { normalizeStream } from './normalized-stream.ts';

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

  /**
   * Registers an adapter under its provider id; returns a disposer. An id already registered throws,
   * unless `replace` is set: then the new adapter serves every later request (streams already open
   * keep the adapter they started with).
   */
  register(adapter: LlmAdapter, options: { replace?: boolean } = {}): Disposer {
    if (options.replace !== true && this.#adapters.has(adapter.provider)) {
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
    const prepared = route ?? this.prepare(request);
    const adapter = prepared.adapter;
    if (adapter === undefined)
      throw new LlmError({ code: 'NO_ADAPTER', message: `no adapter for '${request.provider}'` });
    return adapter.stream(imageReadyRequest(request, prepared.model), signal);
  }
}
