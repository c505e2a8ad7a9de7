import type {
  LlmAdapter,
  LlmCallConfig,
  LlmRequest,
  ModelInfo,
  RetryPolicy,
  StreamChunk,
} from '../../llm/index.ts';
import { LlmError } from '../../llm/index.ts';
import { defaultIdleTimeoutMs, streamServerSentEventBatches, validBaseUrl } from '../http/index.ts';
import { lookupModel } from '../catalog/index.ts';
import { buildChatCompletionsBody } from './openai-request.ts';
import type { OpenAIRequestStyle } from './openai-request.ts';
import { translateChatCompletionsStream } from './openai-stream.ts';

/** Options of an OpenAI-compatible provider (DeepSeek, OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter…). */
export interface OpenAICompatibleProviderOptions {
  /** The provider id routes use, e.g. `deepseek`. */
  provider: string;
  /** The API base; `/chat/completions` is appended (e.g. `https://api.deepseek.com`, `https://api.openai.com/v1`). */
  baseUrl: string;
  /** Sent as a Bearer token; local servers may need none. */
  apiKey?: string | undefined;
  /** Facts about the models this provider serves (context window, output limit, prices). */
  models?: Readonly<Record<string, ModelInfo>> | undefined;
  /** Facts for a model `models` does not list; the built-in catalog under this provider id by default. */
  fallbackModel?: ((model: string) => ModelInfo | undefined) | undefined;
  /** Longest silence allowed while waiting for headers or between stream reads; 120 s by default. */
  idleTimeoutMs?: number | undefined;
  /** Extra request headers (OpenRouter's `HTTP-Referer`, a proxy's auth…). */
  headers?: Readonly<Record<string, string>> | undefined;
  retryPolicy?: RetryPolicy | undefined;
  /** Pass `reasoning_content` back on tool-calling exchanges (DeepSeek thinking mode); true by default. */
  reasoningReplay?: boolean | undefined;
  /** The output-limit field; `max_tokens` by default, `max_completion_tokens` for OpenAI. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens' | undefined;
  /**
   * The output limit sent when a call sets no `maxTokens`: by default the catalog's `maxOutputTokens`
   * for this provider's model (none for models the catalog does not know, so the server's default holds).
   */
  outputLimit?: ((model: string) => number | undefined) | undefined;
  /** Ask for a final usage chunk (`stream_options.include_usage`); true by default. */
  streamUsage?: boolean | undefined;
  /** The fetch implementation; the global one by default. */
  fetch?: typeof fetch | undefined;
}

/**
 * Streams Chat Completions from any OpenAI-compatible endpoint over fetch and `eventsource-parser`:
 * text, DeepSeek `reasoning_content` (replayed where thinking mode requires it), parallel tool calls,
 * usage with cached tokens, and canonical failures. It never retries: retry belongs to the loop.
 */
export class OpenAICompatibleProvider implements LlmAdapter {
  readonly provider: string;
  readonly retryPolicy: RetryPolicy | undefined;
  readonly baseUrl: string;
  readonly #options: OpenAICompatibleProviderOptions;
  readonly #style: OpenAIRequestStyle;

  constructor(options: OpenAICompatibleProviderOptions) {
    if (typeof options.provider !== 'string' || options.provider === '') {
      throw new LlmError({
        code: 'INVALID_REQUEST',
        message: 'an OpenAI-compatible provider needs a provider id',
      });
    }
    this.provider = options.provider;
    this.baseUrl = validBaseUrl(options.baseUrl, options.provider);
    this.retryPolicy = options.retryPolicy;
    this.#options = options;
    this.#style = {
      provider: options.provider,
      reasoningReplay: options.reasoningReplay ?? true,
      maxTokensField: options.maxTokensField ?? 'max_tokens',
      streamUsage: options.streamUsage ?? true,
    };
  }

  listModels(): readonly string[] {
    return Object.keys(this.#options.models ?? {});
  }

  describeModel(model: string): ModelInfo | undefined {
    const fallback = this.#options.fallbackModel ?? ((name: string) => lookupModel(this.provider, name));
    return this.#options.models?.[model] ?? fallback(model);
  }

  prepare(config: LlmCallConfig): LlmCallConfig {
    if (
      config.maxTokens !== undefined &&
      (!Number.isSafeInteger(config.maxTokens) || config.maxTokens <= 0)
    ) {
      throw new LlmError({ code: 'INVALID_REQUEST', message: 'maxTokens must be a positive integer' });
    }
    return this.#withSampling(this.#withOutputLimit(this.#withEffort(config)));
  }

  // The model's configured default effort applies when the call sets none; a token budget (from
  // `--thinking 8000`) becomes the nearest level, the only form Chat Completions takes.
  #withEffort<Config extends LlmCallConfig>(config: Config): Config {
    const effort = config.reasoningEffort ?? this.describeModel(config.model)?.reasoningEffort;
    if (effort === undefined) return config;
    if (!/^\d+$/.test(effort))
      return effort === config.reasoningEffort ? config : { ...config, reasoningEffort: effort };
    const budget = Number(effort);
    const level = budget <= 2048 ? 'low' : budget <= 16_384 ? 'medium' : 'high';
    return { ...config, reasoningEffort: level };
  }

  // Reasoning models reject a non-default temperature while they reason (OpenAI answers 400), and
  // models with fixed sampling always do: the temperature is kept only where the vendor takes it.
  #withSampling<Config extends LlmCallConfig>(config: Config): Config {
    if (config.temperature === undefined) return config;
    const info = this.describeModel(config.model);
    const reasoningOff = config.reasoningEffort === 'none' || config.reasoningEffort === 'off';
    const rejected = info?.fixedSampling === true || (info?.reasoning === true && !reasoningOff);
    if (!rejected) return config;
    const { temperature: _dropped, ...rest } = config;
    return rest as Config;
  }

  // Without a limit some servers apply a low default of their own (DeepSeek: 4K) and cut long writes.
  #withOutputLimit<Config extends LlmCallConfig>(config: Config): Config {
    if (config.maxTokens !== undefined) return config;
    const limit =
      this.#options.outputLimit?.(config.model) ?? lookupModel(this.provider, config.model)?.maxOutputTokens;
    return limit !== undefined && Number.isSafeInteger(limit) && limit > 0
      ? { ...config, maxTokens: limit }
      : config;
  }

  stream(request: LlmRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
    const headers: Record<string, string> = { ...this.#options.headers };
    if (this.#options.apiKey !== undefined && this.#options.apiKey !== '') {
      headers.authorization = `Bearer ${this.#options.apiKey}`;
    }
    const batches = streamServerSentEventBatches({
      provider: this.provider,
      url: `${this.baseUrl}/chat/completions`,
      headers,
      body: buildChatCompletionsBody(
        this.#withSampling(this.#withOutputLimit(this.#withEffort(request))),
        this.#style,
      ),
      signal,
      idleTimeoutMs: this.#options.idleTimeoutMs ?? defaultIdleTimeoutMs,
      fetch: this.#options.fetch,
    });
    return translateChatCompletionsStream(batches, this.provider);
  }
}
