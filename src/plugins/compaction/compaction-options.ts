import { CompactionError } from './compaction-error.ts';
import type { ModelRoute } from './session-lookups.ts';

/** How oversized tool results are pruned (counts are Unicode code points). */
export interface PruneSettings {
  /** A result whose text exceeds this is pruned; 8192 by default. */
  thresholdChars: number;
  /** Code points kept from the start; 4096 by default. */
  headChars: number;
  /** Code points kept from the end; 1024 by default. */
  tailChars: number;
}

/** The tunable settings, globally or per route. */
export interface CompactionSettings {
  /** Compact when the measured request reaches this share of the context window; 0.8 by default. */
  thresholdRatio?: number;
  /** Keep this share of the context window uncompacted at the tail; 0.16 by default. */
  retainRatio?: number;
  /** Keep this many tokens uncompacted at the tail (instead of `retainRatio`). */
  retainTokens?: number;
  /** The output cap of the summary call; 8192 by default. */
  maxTokens?: number;
  /** Further summarizing attempts when one summary did not bring pressure below the threshold; 1 by default. */
  compactionRetries?: number;
  /** Recoveries of one context-overflow failure chain; 1 by default, 0 disables overflow recovery. */
  maxOverflowRetries?: number;
  /** Whether the pressure and overflow triggers act at all; true by default. */
  auto?: boolean;
  /** The route that writes summaries; the conversation's route when omitted. */
  summarizer?: ModelRoute;
  /** The context window in tokens, for routes whose adapter does not describe the model. */
  contextWindow?: number;
  /** Tool-result pruning; `false` turns it off. */
  pruning?: false | Partial<PruneSettings>;
}

/** Settings that apply to one provider (every model) or one exact provider/model pair. */
export interface CompactionOverride extends CompactionSettings {
  provider: string;
  model?: string;
}

/** A contained problem the plugin reports instead of failing the step (configuration, failed attempts). */
export interface CompactionWarning {
  code: string;
  message: string;
  agentId: string;
  provider?: string;
  model?: string;
}

/** Options of `compactionPlugin`: global settings, per-route overrides and where warnings go. */
export interface CompactionOptions extends CompactionSettings {
  /** Per-route settings; an exact provider/model entry wins over a provider-wide one. */
  overrides?: readonly CompactionOverride[];
  /** Receives contained problems; `console.warn` by default. */
  onWarning?: (warning: CompactionWarning) => void;
}

/** The settings in force for one route, every default filled in. */
export interface ResolvedCompactionSettings {
  thresholdRatio: number;
  retain: { kind: 'ratio'; ratio: number } | { kind: 'tokens'; tokens: number };
  maxTokens: number;
  compactionRetries: number;
  maxOverflowRetries: number;
  auto: boolean;
  summarizer: ModelRoute | undefined;
  contextWindow: number | undefined;
  pruning: PruneSettings | undefined;
}

/** The token budgets of one route. */
export interface CompactionBudget {
  contextWindow: number;
  thresholdTokens: number;
  retainTokens: number;
}

const defaultPruning: PruneSettings = { thresholdChars: 8192, headChars: 4096, tailChars: 1024 };

// Room the pruning marker needs, so that a pruned result stays under the threshold (idempotence).
const markerAllowance = 200;

/** Throws CompactionError `INVALID_COMPACTION_OPTIONS` when any layer of the options is malformed. */
export function validateCompactionOptions(options: CompactionOptions): void {
  validateLayer(options, 'options');
  for (const [index, override] of (options.overrides ?? []).entries()) {
    const where = `overrides[${index}]`;
    if (typeof override.provider !== 'string' || override.provider === '')
      invalid(`${where}.provider is required`);
    if (override.model !== undefined && (typeof override.model !== 'string' || override.model === '')) {
      invalid(`${where}.model must be a non-empty string`);
    }
    validateLayer(override, where);
  }
}

/** The settings for a route: defaults, then the global options, then the provider's, then the exact pair's. */
export function resolveSettings(
  options: CompactionOptions,
  route: ModelRoute | undefined,
): ResolvedCompactionSettings {
  const resolved: ResolvedCompactionSettings = {
    thresholdRatio: 0.8,
    retain: { kind: 'ratio', ratio: 0.16 },
    maxTokens: 8192,
    compactionRetries: 1,
    maxOverflowRetries: 1,
    auto: true,
    summarizer: undefined,
    contextWindow: undefined,
    pruning: { ...defaultPruning },
  };
  const layers: CompactionSettings[] = [options];
  if (route !== undefined) {
    const overrides = options.overrides ?? [];
    layers.push(...overrides.filter((o) => o.provider === route.provider && o.model === undefined));
    layers.push(...overrides.filter((o) => o.provider === route.provider && o.model === route.model));
  }
  for (const layer of layers) applyLayer(resolved, layer);
  return resolved;
}

/** The threshold and retention of a route with a known window; throws when retention is not below the threshold. */
export function budgetFor(settings: ResolvedCompactionSettings, contextWindow: number): CompactionBudget {
  const thresholdTokens = Math.floor(contextWindow * settings.thresholdRatio);
  const retainTokens =
    settings.retain.kind === 'tokens'
      ? settings.retain.tokens
      : Math.floor(contextWindow * settings.retain.ratio);
  if (retainTokens >= thresholdTokens) {
    throw new CompactionError(
      'INVALID_COMPACTION_OPTIONS',
      `the retained tail (${retainTokens} tokens) must be below the compaction threshold (${thresholdTokens} tokens of a ${contextWindow}-token window)`,
    );
  }
  return { contextWindow, thresholdTokens, retainTokens };
}

function applyLayer(resolved: ResolvedCompactionSettings, layer: CompactionSettings): void {
  if (layer.thresholdRatio !== undefined) resolved.thresholdRatio = layer.thresholdRatio;
  if (layer.retainRatio !== undefined) resolved.retain = { kind: 'ratio', ratio: layer.retainRatio };
  if (layer.retainTokens !== undefined) resolved.retain = { kind: 'tokens', tokens: layer.retainTokens };
  if (layer.maxTokens !== undefined) resolved.maxTokens = layer.maxTokens;
  if (layer.compactionRetries !== undefined) resolved.compactionRetries = layer.compactionRetries;
  if (layer.maxOverflowRetries !== undefined) resolved.maxOverflowRetries = layer.maxOverflowRetries;
  if (layer.auto !== undefined) resolved.auto = layer.auto;
  if (layer.summarizer !== undefined) resolved.summarizer = { ...layer.summarizer };
  if (layer.contextWindow !== undefined) resolved.contextWindow = layer.contextWindow;
  if (layer.pruning === false) resolved.pruning = undefined;
  else if (layer.pruning !== undefined)
    resolved.pruning = { ...(resolved.pruning ?? defaultPruning), ...layer.pruning };
}

function validateLayer(layer: CompactionSettings, where: string): void {
  const ratio = (value: number | undefined, name: string, max: number, inclusive: boolean): void => {
    if (value === undefined) return;
    const ok = typeof value === 'number' && value > 0 && (inclusive ? value <= max : value < max);
    if (!ok) invalid(`${where}.${name} must be a number in (0, ${max}${inclusive ? ']' : ')'}`);
  };
  const count = (value: number | undefined, name: string, min: number): void => {
    if (value === undefined) return;
    if (!Number.isSafeInteger(value) || value < min) invalid(`${where}.${name} must be an integer ≥ ${min}`);
  };
  ratio(layer.thresholdRatio, 'thresholdRatio', 1, true);
  if (layer.retainRatio !== undefined && layer.retainRatio !== 0)
    ratio(layer.retainRatio, 'retainRatio', 1, false);
  if (layer.retainRatio !== undefined && layer.retainTokens !== undefined) {
    invalid(`${where}: retainRatio and retainTokens are mutually exclusive`);
  }
  count(layer.retainTokens, 'retainTokens', 0);
  count(layer.maxTokens, 'maxTokens', 1);
  count(layer.compactionRetries, 'compactionRetries', 0);
  count(layer.maxOverflowRetries, 'maxOverflowRetries', 0);
  count(layer.contextWindow, 'contextWindow', 1);
  if (layer.auto !== undefined && typeof layer.auto !== 'boolean') invalid(`${where}.auto must be a boolean`);
  const summarizer = layer.summarizer;
  if (
    summarizer !== undefined &&
    (typeof summarizer.provider !== 'string' ||
      summarizer.provider === '' ||
      typeof summarizer.model !== 'string' ||
      summarizer.model === '')
  ) {
    invalid(`${where}.summarizer needs a provider and a model`);
  }
  const pruning = layer.pruning;
  if (pruning !== undefined && pruning !== false) {
    count(pruning.thresholdChars, 'pruning.thresholdChars', 1);
    count(pruning.headChars, 'pruning.headChars', 0);
    count(pruning.tailChars, 'pruning.tailChars', 0);
    const merged = { ...defaultPruning, ...pruning };
    if (merged.headChars + merged.tailChars + markerAllowance > merged.thresholdChars) {
      invalid(
        `${where}.pruning: headChars + tailChars must leave ${markerAllowance} code points below thresholdChars`,
      );
    }
  }
}

function invalid(message: string): never {
  throw new CompactionError('INVALID_COMPACTION_OPTIONS', message);
}
