import type { Message } from './message.ts';

/** A JSON Schema object, as sent to a model for tool parameters. */
export type JsonSchema = { [key: string]: unknown };

/** One tool as the model sees it. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** The route and sampling parameters of one model call. */
export interface LlmCallConfig {
  provider: string;
  model: string;
  /**
   * How hard the model thinks: a level (`none`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`) or a
   * thinking budget in tokens (`"8000"`); each adapter maps it to its vendor's field.
   */
  reasoningEffort?: string;
  temperature?: number;
  maxTokens?: number;
  stop?: string[];
}

/** A complete model request: config, history, system prompt and tools. */
export interface LlmRequest extends LlmCallConfig {
  messages: readonly Message[];
  system?: string;
  tools?: readonly ToolSchema[];
  sessionId?: string;
  /** What the call is for: `turn` for loop requests, `compaction` for summaries, or a plugin's word. */
  purpose?: string;
}

/** What an adapter knows about a model. */
export interface ModelInfo {
  contextWindow?: number;
  maxOutputTokens?: number;
  /** Prices in US dollars per million tokens. */
  pricing?: { input: number; cachedInput?: number; cacheWrite?: number; output: number };
  reasoning?: boolean;
  /** The effort calls of this model use when they set none (a config `models` entry sets it). */
  reasoningEffort?: string;
  /**
   * The ways the model takes a thinking request: `budget` (a token budget per call) and `adaptive` (the
   * model decides how much to think, steered by an effort level). A named effort uses `adaptive` where
   * the model has it; a token budget needs `budget`. `['adaptive']` when unset.
   */
  thinking?: readonly ('budget' | 'adaptive')[];
  /** True for a model that rejects sampling parameters other than its defaults (Rein then sends none). */
  fixedSampling?: boolean;
  /** True for a model that accepts images in user messages. */
  images?: boolean;
  /**
   * The most base64 characters one image may have for this model (its vendor answers a larger one with
   * a 400); no limit of its own when unset, beyond the 20 MiB a message's images may carry.
   */
  imageBytes?: number;
  /** The most images one request may carry (the vendor refuses more); older ones become notes. */
  imagesPerRequest?: number;
  /** The most base64 characters of images one request may carry together; older ones become notes. */
  imageBytesPerRequest?: number;
  label?: string;
  /** True for a model that plays a script rather than calling a vendor. */
  demo?: boolean;
}
