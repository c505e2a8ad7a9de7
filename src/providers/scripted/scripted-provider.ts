import type {
  LlmAdapter,
  LlmFailure,
  LlmRequest,
  ModelInfo,
  RetryPolicy,
  StreamChunk,
  TokenUsage,
} from '../../llm/index.ts';
import { LlmError } from '../../llm/index.ts';

// What a scripted model nobody described declares: only that it takes images.
const scriptedImageModel: ModelInfo = Object.freeze({ images: true });

/** One scripted tool call; object arguments are serialized, string arguments are sent raw. */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments?: unknown;
}

/** One scripted model response. */
export interface ScriptedResponse {
  /** Reasoning text, or its deltas. */
  reasoning?: string | readonly string[];
  /** Answer text, or its deltas. */
  text?: string | readonly string[];
  toolCalls?: readonly ScriptedToolCall[];
  usage?: TokenUsage;
  /** Finish reason; defaults to `tool-calls` with calls, else `stop`. */
  finish?: 'stop' | 'tool-calls' | 'max-tokens';
  /** Ends the stream in-band with this failure (after any content). */
  error?: LlmFailure;
  /** Makes the adapter throw this failure (after any content) instead of finishing. */
  throws?: LlmFailure;
  /** Waits this long before each chunk (abort-aware). */
  delayMs?: number;
  /** After the content, waits until the request is aborted. */
  hang?: boolean;
  /** Raw chunks to stream verbatim instead of the fields above. */
  chunks?: readonly StreamChunk[];
}

/** A script entry: a response, or a function of the request that returns one. */
export type ScriptedTurn = ScriptedResponse | ((request: LlmRequest, call: number) => ScriptedResponse);

/** Options of a scripted provider. */
export interface ScriptedProviderOptions {
  provider?: string;
  /** The responses in order; one per model call. */
  responses?: readonly ScriptedTurn[];
  /** Used when the script runs out; without it an exhausted script fails the call. */
  fallback?: ScriptedTurn;
  models?: Readonly<Record<string, ModelInfo>>;
  /**
   * Whether a model it has no facts for takes images (true by default, so a script can stand in for a
   * vision model; `false` for a text-only one). A model in `models` takes images only when its facts say so.
   */
  images?: boolean;
  retryPolicy?: RetryPolicy;
  /**
   * Whether `requests` records every request (the default). Each recorded request holds its own history
   * snapshot, so a run of n steps keeps O(n²) memory: switch it off for long runs and benchmarks.
   */
  recordRequests?: boolean;
}

/**
 * A model provider that plays a script: text and reasoning deltas, tool calls, usage, max-tokens,
 * in-band errors, adapter throws, per-chunk delays and hangs. It records every request it receives
 * unless told not to.
 */
export class ScriptedProvider implements LlmAdapter {
  readonly provider: string;
  readonly retryPolicy: RetryPolicy | undefined;
  /** Every request received, in order (empty with `recordRequests: false`). */
  readonly requests: LlmRequest[] = [];
  readonly #record: boolean;
  readonly #queue: ScriptedTurn[];
  readonly #fallback: ScriptedTurn | undefined;
  readonly #models: Readonly<Record<string, ModelInfo>>;
  readonly #images: boolean;
  #calls = 0;

  constructor(options: ScriptedProviderOptions = {}) {
    this.provider = options.provider ?? 'scripted';
    this.retryPolicy = options.retryPolicy;
    this.#queue = [...(options.responses ?? [])];
    this.#fallback = options.fallback;
    this.#images = options.images ?? true;
    this.#models = options.models ?? {};
    this.#record = options.recordRequests ?? true;
  }

  /** Appends responses to the script. */
  push(...responses: ScriptedTurn[]): void {
    this.#queue.push(...responses);
  }

  /** The number of responses still scripted. */
  get remaining(): number {
    return this.#queue.length;
  }

  listModels(): readonly string[] {
    return Object.keys(this.#models);
  }

  describeModel(model: string): ModelInfo | undefined {
    return this.#models[model] ?? (this.#images ? scriptedImageModel : undefined);
  }

  stream(request: LlmRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
    if (this.#record) this.requests.push(request);
    const call = this.#calls++;
    const entry = this.#queue.shift() ?? this.#fallback;
    if (entry === undefined) {
      throw new LlmError({
        code: 'SCRIPT_EXHAUSTED',
        message: `the script has no response for call ${call + 1}`,
      });
    }
    const response = typeof entry === 'function' ? entry(request, call) : entry;
    return play(response, signal);
  }
}

/** The chunks a scripted response streams, in order (without delays, hangs or throws). */
export function scriptedChunks(response: ScriptedResponse): StreamChunk[] {
  if (response.chunks !== undefined) return [...response.chunks];
  const chunks: StreamChunk[] = [];
  let index = 0;
  const deltas = (value: string | readonly string[]): readonly string[] =>
    typeof value === 'string' ? [value] : value;
  if (response.reasoning !== undefined) {
    const parts = deltas(response.reasoning);
    chunks.push({ type: 'block-start', index, blockType: 'reasoning' });
    for (const text of parts) chunks.push({ type: 'reasoning-delta', index, text });
    chunks.push({ type: 'block-end', index, block: { type: 'reasoning', text: parts.join('') } });
    index++;
  }
  if (response.text !== undefined) {
    const parts = deltas(response.text);
    chunks.push({ type: 'block-start', index, blockType: 'text' });
    for (const text of parts) chunks.push({ type: 'text-delta', index, text });
    chunks.push({ type: 'block-end', index, block: { type: 'text', text: parts.join('') } });
    index++;
  }
  for (const call of response.toolCalls ?? []) {
    const id = call.id ?? `call_${index}`;
    const args =
      call.arguments === undefined
        ? '{}'
        : typeof call.arguments === 'string'
          ? call.arguments
          : JSON.stringify(call.arguments);
    chunks.push({ type: 'block-start', index, blockType: 'tool-call' });
    chunks.push({ type: 'tool-call-delta', index, id, name: call.name, argumentsDelta: args });
    chunks.push({
      type: 'block-end',
      index,
      block: { type: 'tool-call', id, name: call.name, arguments: args },
    });
    index++;
  }
  if (response.usage !== undefined) chunks.push({ type: 'usage', usage: response.usage });
  if (response.throws !== undefined || response.hang === true) return chunks;
  if (response.error !== undefined) {
    chunks.push({ type: 'finish', reason: { kind: 'error', failure: response.error } });
    return chunks;
  }
  const finish = response.finish ?? ((response.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop');
  chunks.push({ type: 'finish', reason: { kind: finish } });
  return chunks;
}

async function* play(
  response: ScriptedResponse,
  signal: AbortSignal,
): AsyncGenerator<StreamChunk, void, undefined> {
  const chunks = scriptedChunks(response);
  const delay = response.delayMs ?? 0;
  for (const chunk of chunks) {
    if (delay > 0) await sleep(delay, signal);
    if (signal.aborted) throw abortError();
    yield chunk;
  }
  if (response.hang === true) {
    await sleep(Number.POSITIVE_INFINITY, signal);
  }
  if (response.throws !== undefined) throw new LlmError(response.throws);
}

function abortError(): LlmError {
  return new LlmError({ code: 'ABORTED', message: 'request aborted' });
}

/** Waits `ms` (forever for Infinity) or until the signal aborts, then rejects with ABORTED. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError());
      return;
    }
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    function done(): void {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort(): void {
      if (timer !== undefined) clearTimeout(timer);
      reject(abortError());
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
