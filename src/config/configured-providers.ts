import type { LlmAdapter, ModelInfo } from '../llm/index.ts';
import { AnthropicProvider } from '../providers/anthropic/index.ts';
import {
  catalogModels,
  canonicalModelName,
  lookupModel,
  resolveModelInfo,
  unknownModelDefaults,
} from '../providers/catalog/index.ts';
import { OpenAICompatibleProvider } from '../providers/openai-compatible/index.ts';
import { ConfigError } from './config-error.ts';
import type { ModelId } from './model-id.ts';
import { parseModelId } from './model-id.ts';
import type { ProviderConfig, ReinConfig } from './rein-config.ts';

type Environment = Readonly<Record<string, string | undefined>>;

/** A built-in provider: its wire protocol, where its key and base URL come from, and its request style. */
interface BuiltinProvider {
  kind: 'openai-compatible' | 'anthropic';
  keyVariable: string;
  baseUrlVariable: string;
  defaultBaseUrl: string;
  /** The model a fresh setup with only this key uses. */
  defaultModel: string;
  reasoningReplay?: boolean;
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

const builtinProviders: Readonly<Record<string, BuiltinProvider>> = {
  deepseek: {
    kind: 'openai-compatible',
    keyVariable: 'DEEPSEEK_API_KEY',
    baseUrlVariable: 'DEEPSEEK_BASE_URL',
    defaultBaseUrl: 'https://api.deepseek.com',
    defaultModel: 'deepseek-v4-flash',
    reasoningReplay: true,
  },
  anthropic: {
    kind: 'anthropic',
    keyVariable: 'ANTHROPIC_API_KEY',
    baseUrlVariable: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com',
    defaultModel: 'claude-sonnet-4-6',
  },
  openai: {
    kind: 'openai-compatible',
    keyVariable: 'OPENAI_API_KEY',
    baseUrlVariable: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
    defaultModel: 'gpt-5.5',
    reasoningReplay: false,
    maxTokensField: 'max_completion_tokens',
  },
};

/** What a UI or `rein doctor` may show about one provider: never the key itself. */
export interface ProviderDescription {
  provider: string;
  kind: 'openai-compatible' | 'anthropic';
  builtin: boolean;
  /** True when it can be called: it has a key, or needs none. */
  configured: boolean;
  /** Where the key comes from. */
  keySource: 'env' | 'config' | 'none' | 'not-required';
  /** The environment variable that holds (or would hold) the key. */
  keyVariable?: string;
  /** The key's last four characters, so two keys can be told apart. */
  keyHint?: string;
  baseUrl: string;
  baseUrlSource: 'env' | 'config' | 'default';
  /** The models it is known to serve (empty: any model name is accepted). */
  models: string[];
}

/** The inputs of provider construction. */
export interface ProviderConfigInputs {
  env?: Environment | undefined;
  config?: ReinConfig | undefined;
  /** The fetch the adapters use (tests, proxies); the global one by default. */
  fetch?: typeof fetch | undefined;
}

interface ResolvedProvider extends ProviderDescription {
  key: string | undefined;
  settings: ProviderConfig;
  modelInfo: Record<string, ModelInfo>;
  /** Output limits the catalog or the config state (not the defaults for undescribed models). */
  outputLimits: Record<string, number>;
  /** Facts for models nobody listed, for providers with open model lists. */
  openModels: boolean;
}

function present(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}

function resolveProviders(inputs: ProviderConfigInputs): ResolvedProvider[] {
  const env = inputs.env ?? process.env;
  const config = inputs.config ?? {};
  const names = [...Object.keys(builtinProviders), ...Object.keys(config.providers ?? {})];
  const resolved: ResolvedProvider[] = [];
  for (const provider of new Set(names)) {
    const builtin = builtinProviders[provider];
    const settings: ProviderConfig = config.providers?.[provider] ?? {};
    const kind = settings.kind ?? builtin?.kind ?? 'openai-compatible';
    const keyVariable = settings.apiKeyEnv ?? builtin?.keyVariable;
    const fromEnv = keyVariable !== undefined ? present(env[keyVariable]) : undefined;
    const fromConfig = present(config.keys?.[provider]);
    const key = fromEnv ?? fromConfig;
    const needsKey = builtin !== undefined || settings.apiKeyEnv !== undefined;
    const keySource =
      fromEnv !== undefined
        ? 'env'
        : fromConfig !== undefined
          ? 'config'
          : needsKey
            ? 'none'
            : 'not-required';
    const envBase = builtin !== undefined ? present(env[builtin.baseUrlVariable]) : undefined;
    const configBase = present(settings.baseUrl);
    if (builtin === undefined && configBase === undefined) {
      throw new ConfigError('INVALID_CONFIG', `providers.${provider}: a custom provider needs a baseUrl`);
    }
    const baseUrl = envBase ?? configBase ?? builtin!.defaultBaseUrl;
    const { models: modelInfo, outputLimits } = modelsOf(provider, settings, config);
    const description: ResolvedProvider = {
      provider,
      kind,
      builtin: builtin !== undefined,
      configured: key !== undefined || !needsKey,
      keySource,
      baseUrl,
      baseUrlSource: envBase !== undefined ? 'env' : configBase !== undefined ? 'config' : 'default',
      models: Object.keys(modelInfo),
      key,
      settings,
      modelInfo,
      outputLimits,
      openModels: builtin === undefined && settings.models === undefined,
    };
    if (keyVariable !== undefined) description.keyVariable = keyVariable;
    if (key !== undefined) description.keyHint = key.slice(-4);
    resolved.push(description);
  }
  return resolved;
}

/** A provider's known models: the catalog's, the provider entry's, and the config's `models` overrides. */
function modelsOf(
  provider: string,
  settings: ProviderConfig,
  config: ReinConfig,
): { models: Record<string, ModelInfo>; outputLimits: Record<string, number> } {
  const overrides: Record<string, Partial<ModelInfo>> = {};
  const listed = settings.models;
  if (Array.isArray(listed)) for (const name of listed) overrides[name] = {};
  else if (listed !== undefined) Object.assign(overrides, listed);
  for (const [id, info] of Object.entries(config.models ?? {})) {
    const parsed = parseModelId(id);
    if (parsed.provider === provider) overrides[parsed.model] = { ...overrides[parsed.model], ...info };
  }
  const models: Record<string, ModelInfo> = {};
  const outputLimits: Record<string, number> = {};
  for (const name of catalogModels(provider)) {
    models[name] = resolveModelInfo(provider, name).info;
    const limit = models[name].maxOutputTokens;
    if (limit !== undefined) outputLimits[name] = limit;
  }
  for (const [name, info] of Object.entries(overrides)) {
    const canonical = canonicalModelName(provider, name);
    models[name] = resolveModelInfo(provider, canonical, info).info;
    const limit = info.maxOutputTokens ?? lookupModel(provider, canonical)?.maxOutputTokens;
    if (limit !== undefined) outputLimits[name] = limit;
  }
  return { models, outputLimits };
}

/** Describes every built-in and configured provider for UIs and `rein doctor`: configured?, key source, base URL. */
export function describeProviders(inputs: ProviderConfigInputs = {}): ProviderDescription[] {
  return resolveProviders(inputs).map(
    ({
      key: _key,
      settings: _settings,
      modelInfo: _info,
      outputLimits: _limits,
      openModels: _open,
      ...description
    }) => description,
  );
}

/**
 * Builds the adapters of every provider that can be called (it has a key, or needs none): DeepSeek,
 * OpenAI and Anthropic from their `*_API_KEY` / `*_BASE_URL` variables or the config, plus the config's
 * custom providers. Models the catalog or config describe carry their facts; dated snapshots resolve.
 */
export function createConfiguredProviders(inputs: ProviderConfigInputs = {}): {
  providers: LlmAdapter[];
  descriptions: ProviderDescription[];
} {
  const resolved = resolveProviders(inputs);
  const providers: LlmAdapter[] = [];
  for (const entry of resolved) {
    if (!entry.configured) continue;
    const builtin = builtinProviders[entry.provider];
    const settings = entry.settings;
    const models = entry.modelInfo;
    // A model nobody described still runs, with conservative facts and no price (see resolveModelId).
    const fallbackModel = (model: string): ModelInfo =>
      models[canonicalModelName(entry.provider, model)] ?? unknownModelDefaults;
    const common = {
      provider: entry.provider,
      baseUrl: entry.baseUrl,
      apiKey: entry.key,
      models,
      fallbackModel,
      headers: settings.headers,
      idleTimeoutMs: settings.idleTimeoutMs,
      fetch: inputs.fetch,
    };
    if (entry.kind === 'anthropic') {
      providers.push(new AnthropicProvider(common));
    } else {
      providers.push(
        new OpenAICompatibleProvider({
          ...common,
          reasoningReplay: settings.reasoningReplay ?? builtin?.reasoningReplay ?? true,
          maxTokensField: settings.maxTokensField ?? builtin?.maxTokensField,
          outputLimit: (model: string) =>
            entry.outputLimits[model] ?? entry.outputLimits[canonicalModelName(entry.provider, model)],
        }),
      );
    }
  }
  return { providers, descriptions: describeProviders(inputs) };
}

/**
 * Checks a `provider/model` id against the configuration: an unknown provider is a ConfigError listing
 * what is configured; a provider without its key is `MISSING_CREDENTIAL` naming the variable. A model
 * the catalog and config do not describe still resolves, with conservative facts, no price and a
 * `warning` for the user (vendors ship new model ids faster than any catalog).
 */
export function resolveModelId(
  id: string,
  inputs: ProviderConfigInputs = {},
): ModelId & { info: ModelInfo; warning?: string } {
  const parsed = parseModelId(id);
  const resolved = resolveProviders(inputs);
  const entry = resolved.find((candidate) => candidate.provider === parsed.provider);
  if (entry === undefined) {
    throw new ConfigError(
      'UNKNOWN_PROVIDER',
      `unknown provider '${parsed.provider}' (known: ${resolved.map((candidate) => candidate.provider).join(', ')}); add custom ones under "providers" in the config file`,
    );
  }
  if (!entry.configured) {
    throw new ConfigError(
      'MISSING_CREDENTIAL',
      `provider '${entry.provider}' has no API key: set ${entry.keyVariable ?? 'its key variable'} (or run \`rein config set-key ${entry.provider}\`)`,
    );
  }
  const canonical = canonicalModelName(entry.provider, parsed.model);
  const info = entry.modelInfo[parsed.model] ?? entry.modelInfo[canonical];
  if (info !== undefined) return { ...parsed, info };
  if (entry.openModels) return { ...parsed, info: unknownModelDefaults };
  return {
    ...parsed,
    info: unknownModelDefaults,
    warning:
      `Rein does not know ${entry.provider}/${parsed.model}; it runs with a ${unknownModelDefaults.contextWindow.toLocaleString('en-US')}-token context assumption and no price, so its cost is not counted. ` +
      `Describe it under "models" in the config file ("${entry.provider}/${parsed.model}": { "contextWindow": …, "pricing": … }). Known: ${entry.models.join(', ')}.`,
  };
}

/** The default route: the config's `defaultModel`, else the first configured built-in's default model. */
export function defaultConfiguredModel(inputs: ProviderConfigInputs = {}): string | undefined {
  const chosen = present(inputs.config?.defaultModel);
  if (chosen !== undefined) return chosen;
  for (const entry of resolveProviders(inputs)) {
    const builtin = builtinProviders[entry.provider];
    if (builtin !== undefined && entry.configured) return `${entry.provider}/${builtin.defaultModel}`;
  }
  return undefined;
}

/**
 * A model's facts (context window, prices) from the catalog and the configuration alone, whether or not
 * its provider has a key: what a stored session cost is a fact of its log and the prices, not of the
 * keys set now. Undefined for a provider nobody knows or a model its lists do not name.
 */
export function configuredModelInfo(
  provider: string,
  model: string,
  inputs: ProviderConfigInputs = {},
): ModelInfo | undefined {
  return configuredModelLookup(inputs)(provider, model);
}

/**
 * `configuredModelInfo` for many models of the same inputs (pricing every session of a listing): the
 * providers are resolved once, on the first question, instead of once per model asked about.
 */
export function configuredModelLookup(
  inputs: ProviderConfigInputs = {},
): (provider: string, model: string) => ModelInfo | undefined {
  let resolved: ReadonlyMap<string, ResolvedProvider> | 'broken' | undefined;
  return (provider, model) => {
    if (resolved === undefined) {
      try {
        const byProvider = new Map<string, ResolvedProvider>();
        for (const entry of resolveProviders(inputs)) {
          if (!byProvider.has(entry.provider)) byProvider.set(entry.provider, entry);
        }
        resolved = byProvider;
      } catch (error) {
        // A broken provider section leaves only the catalog to price with.
        if (!(error instanceof ConfigError)) throw error;
        resolved = 'broken';
      }
    }
    if (resolved === 'broken') return lookupModel(provider, model);
    const entry = resolved.get(provider);
    if (entry === undefined) return undefined;
    return entry.modelInfo[model] ?? entry.modelInfo[canonicalModelName(provider, model)];
  };
}
