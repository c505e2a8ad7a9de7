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
import type { AnthropicThinking } from './anthropic-request.ts';
import { buildMessagesBody } from './anthropic-request.ts';
import { translateMessagesStream } from './anthropic-stream.ts';

/** Options of the Anthropic Messages API provider. */
export interface AnthropicProviderOptions {
  /** The provider id routes use; `anthropic` by default. */
  provider?: string | undefined;
  /** The API base without `/v1`; `https://api.anthropic.com` by default. */
  baseUrl?: string | undefined;
  /** Sent as `x-api-key`. */
  apiKey?: string | undefined;
  /** The `anthropic-version` header; `2023-06-01` by default. */
  apiVersion?: string | undefined;
  /** Facts about the models (context window, output limit, prices). */
  models?: Readonly<Record<string, ModelInfo>> | undefined;
  /** Facts for a model `models` does not list; the built-in catalog by default. */
  fallbackModel?: ((model: string) => ModelInfo | undefined) | undefined;
  /** `max_tokens` when neither the call nor the model says; 8192 by default. */
  defaultMaxTokens?: number | undefined;
  /** Longest silence allowed while waiting for headers or between stream reads; 120 s by default. */
  idleTimeoutMs?: number | undefined;
  /** Prompt-caching breakpoints on system, tools and the latest message; true by default. */
  promptCaching?: boolean | undefined;
  /** Extra request headers (an `anthropic-beta` flag, a proxy's auth…). */
  headers?: Readonly<Record<string, string>> | undefined;
  retryPolicy?: RetryPolicy | undefined;
  /** The fetch implementation; the global one by default. */
  fetch?: typeof fetch | undefined;
}

// Thinking budgets for the named efforts; a number given as the effort is taken as the budget itself.
const thinkingBudgets: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
  xhigh: 32_000,
  max: 32_000,
};

// The effort levels adaptive thinking takes (`output_config.effort`); `minimal` asks for the lowest.
const adaptiveEfforts: Readonly<Record<string, string>> = {
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
  max: 'max',
};

const minimumThinkingBudget = 1024;

/**
 * Streams the Anthropic Messages API over fetch and `eventsource-parser`: text, thinking with signatures
 * and redacted thinking replayed unchanged, tool_use / tool_result, cache read and write usage, and
 * prompt-caching breakpoints. `reasoningEffort` turns extended thinking on. It never retries.
 */
export class AnthropicProvider implements LlmAdapter {
  readonly provider: string;
  readonly retryPolicy: RetryPolicy | undefined;
  readonly baseUrl: string;
  readonly #options: AnthropicProviderOptions;

  constructor(options: AnthropicProviderOptions = {}) {
    this.provider = options.provider ?? 'anthropic';
    this.baseUrl = validBaseUrl(options.baseUrl ?? 'https://api.anthropic.com', this.provider);
    this.retryPolicy = options.retryPolicy;
    this.#options = options;
  }

  listModels(): readonly string[] {
    return Object.keys(this.#options.models ?? {});
  }

  describeModel(model: string): ModelInfo | undefined {
    const fallback = this.#options.fallbackModel ?? ((name: string) => lookupModel('anthropic', name));
    return this.#options.models?.[model] ?? fallback(model);
  }

  prepare(config: LlmCallConfig): LlmCallConfig {
    this.#plan(config);
    return config;
  }

  stream(request: LlmRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
    const plan = this.#plan(request);
    const headers: Record<string, string> = {
      'anthropic-version': this.#options.apiVersion ?? '2023-06-01',
      ...this.#options.headers,
    };
    if (this.#options.apiKey !== undefined && this.#options.apiKey !== '')
      headers['x-api-key'] = this.#options.apiKey;
    const batches = streamServerSentEventBatches({
      provider: this.provider,
      url: `${this.baseUrl}/v1/messages`,
      headers,
      body: buildMessagesBody(request, {
        provider: this.provider,
        maxTokens: plan.maxTokens,
        thinking: plan.thinking,
        sampling: plan.sampling,
        promptCaching: this.#options.promptCaching ?? true,
      }),
      signal,
      idleTimeoutMs: this.#options.idleTimeoutMs ?? defaultIdleTimeoutMs,
      fetch: this.#options.fetch,
    });
    return translateMessagesStream(batches, this.provider);
  }

  /** Resolves `max_tokens` and the thinking of a call as its model takes them; throws a typed error for impossible ones. */
  #plan(config: LlmCallConfig): {
    maxTokens: number;
    thinking: AnthropicThinking | undefined;
    sampling: boolean;
  } {
    const explicit = config.maxTokens;
    if (explicit !== undefined && (!Number.isSafeInteger(explicit) || explicit <= 0)) {
      throw new LlmError({ code: 'INVALID_REQUEST', message: 'maxTokens must be a positive integer' });
    }
    const info = this.describeModel(config.model);
    const maxTokens = explicit ?? info?.maxOutputTokens ?? this.#options.defaultMaxTokens ?? 8192;
    const sampling = info?.fixedSampling !== true;
    const effort = config.reasoningEffort ?? info?.reasoningEffort;
    if (effort === undefined || effort === 'none' || effort === 'off')
      return { maxTokens, thinking: undefined, sampling };
    const modes = info?.thinking ?? ['adaptive'];
    const level = adaptiveEfforts[effort];
    if (modes.includes('adaptive') && level !== undefined)
      return { maxTokens, thinking: { kind: 'adaptive', effort: level }, sampling };
    if (!modes.includes('budget')) {
      throw new LlmError({
        code: 'UNSUPPORTED_REASONING_EFFORT',
        message: `${this.provider}: ${config.model} thinks adaptively; reasoning effort '${effort}' is not one of none, ${Object.keys(adaptiveEfforts).join(', ')} (it takes no token budget)`,
      });
    }
    const requested = thinkingBudgets[effort] ?? (/^\d+$/.test(effort) ? Number(effort) : undefined);
    if (requested === undefined) {
      throw new LlmError({
        code: 'UNSUPPORTED_REASONING_EFFORT',
        message: `${this.provider}: reasoning effort '${effort}' is not one of none, ${Object.keys(thinkingBudgets).join(', ')} or a token budget`,
      });
    }
    // The budget must leave room for the answer inside max_tokens.
    const budgetTokens = Math.min(requested, maxTokens - minimumThinkingBudget);
    if (budgetTokens < minimumThinkingBudget) {
      throw new LlmError({
        code: 'UNSUPPORTED_REASONING_EFFORT',
        message: `${this.provider}: max tokens ${maxTokens} leave no room for a thinking budget of at least ${minimumThinkingBudget}`,
      });
    }
    return { maxTokens, thinking: { kind: 'budget', budgetTokens }, sampling };
  }
}
