import type { ModelInfo } from '../../llm/index.ts';

/** A catalog row: what Rein knows about one model without asking the network. */
export interface CatalogModel extends ModelInfo {
  contextWindow: number;
  maxOutputTokens: number;
}

const million = (
  input: number,
  cachedInput: number,
  output: number,
  cacheWrite?: number,
): NonNullable<ModelInfo['pricing']> =>
  cacheWrite === undefined ? { input, cachedInput, output } : { input, cachedInput, cacheWrite, output };

// Anthropic refuses an image whose base64 is longer than 5 MB (5,242,880 characters) with a 400, more
// than 100 images in a request, and a request over 32 MB with a 413: 24 MiB of images leaves room for
// a full context of text.
const anthropicImages = {
  images: true,
  imageBytes: 5 * 1_048_576,
  imagesPerRequest: 100,
  imageBytesPerRequest: 24 * 1_048_576,
} as const;
// OpenAI takes at most 500 images and 50 MB in one request: 40 MiB of images leaves room for the text.
const openaiImages = { images: true, imagesPerRequest: 500, imageBytesPerRequest: 40 * 1_048_576 } as const;

/**
 * Context windows, output limits and list prices (US dollars per million tokens: input, cached input,
 * cache write where the vendor bills it, output) of current DeepSeek, OpenAI and Anthropic models, as
 * the vendors' model pages listed them in December 2026 (DeepSeek bills off-peak hours at half these
 * rates). `images: true` marks the models that take image input (every OpenAI and Anthropic row here;
 * DeepSeek's chat API takes text only), with the limits per image and per request the vendor enforces. Prices change; a config `models` entry overrides any field
 * (`"images": true` for a local vision model), and a model missing here still runs (with conservative
 * defaults, no price and no image input).
 */
export const modelCatalog: Readonly<Record<string, Readonly<Record<string, CatalogModel>>>> = {
  deepseek: {
    'deepseek-v4-flash': {
      label: 'DeepSeek V4 Flash',
      contextWindow: 1_000_000,
      maxOutputTokens: 384_000,
      reasoning: true,
      pricing: million(0.14, 0.0028, 0.28),
    },
    'deepseek-v4-pro': {
      label: 'DeepSeek V4 Pro',
      contextWindow: 1_000_000,
      maxOutputTokens: 384_000,
      reasoning: true,
      pricing: million(0.435, 0.003625, 0.87),
    },
    // The V3.2-era names, with the facts DeepSeek published for them; V4 Flash is the current model.
    'deepseek-chat': {
      label: 'DeepSeek V3.2 (non-thinking), legacy name',
      contextWindow: 128_000,
      maxOutputTokens: 8_192,
      pricing: million(0.28, 0.028, 0.42),
    },
    'deepseek-reasoner': {
      label: 'DeepSeek V3.2 (thinking), legacy name',
      contextWindow: 128_000,
      maxOutputTokens: 65_536,
      reasoning: true,
      pricing: million(0.28, 0.028, 0.42),
    },
  },
  openai: {
    'gpt-5.5': {
      label: 'GPT-5.5',
      ...openaiImages,
      contextWindow: 1_050_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      pricing: million(5, 0.5, 30),
    },
    'gpt-5.1': {
      label: 'GPT-5.1',
      ...openaiImages,
      contextWindow: 400_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      pricing: million(1.25, 0.125, 10),
    },
    'gpt-5': {
      label: 'GPT-5',
      ...openaiImages,
      contextWindow: 400_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      fixedSampling: true,
      pricing: million(1.25, 0.125, 10),
    },
    'gpt-5-mini': {
      label: 'GPT-5 mini',
      ...openaiImages,
      contextWindow: 400_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      fixedSampling: true,
      pricing: million(0.25, 0.025, 2),
    },
    'gpt-5-nano': {
      label: 'GPT-5 nano',
      ...openaiImages,
      contextWindow: 400_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      fixedSampling: true,
      pricing: million(0.05, 0.005, 0.4),
    },
    'gpt-4.1': {
      label: 'GPT-4.1',
      ...openaiImages,
      contextWindow: 1_047_576,
      maxOutputTokens: 32_768,
      pricing: million(2, 0.5, 8),
    },
    'gpt-4.1-mini': {
      label: 'GPT-4.1 mini',
      ...openaiImages,
      contextWindow: 1_047_576,
      maxOutputTokens: 32_768,
      pricing: million(0.4, 0.1, 1.6),
    },
    'gpt-4.1-nano': {
      label: 'GPT-4.1 nano',
      ...openaiImages,
      contextWindow: 1_047_576,
      maxOutputTokens: 32_768,
      pricing: million(0.1, 0.025, 0.4),
    },
    'gpt-4o': {
      label: 'GPT-4o',
      ...openaiImages,
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      pricing: million(2.5, 1.25, 10),
    },
    'gpt-4o-mini': {
      label: 'GPT-4o mini',
      ...openaiImages,
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      pricing: million(0.15, 0.075, 0.6),
    },
    o3: {
      label: 'o3',
      ...openaiImages,
      contextWindow: 200_000,
      maxOutputTokens: 100_000,
      reasoning: true,
      fixedSampling: true,
      pricing: million(2, 0.5, 8),
    },
    'o4-mini': {
      label: 'o4-mini',
      ...openaiImages,
      contextWindow: 200_000,
      maxOutputTokens: 100_000,
      reasoning: true,
      fixedSampling: true,
      pricing: million(1.1, 0.275, 4.4),
    },
  },
  anthropic: {
    'claude-opus-5-5': {
      label: 'Claude Opus 5.5',
      ...anthropicImages,
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      thinking: ['adaptive'],
      fixedSampling: true,
      pricing: million(4, 0.4, 20, 5),
    },
    'claude-sonnet-5-5': {
      label: 'Claude Sonnet 5.5',
      ...anthropicImages,
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      thinking: ['adaptive'],
      fixedSampling: true,
      pricing: million(2, 0.2, 10, 2.5),
    },
    'claude-sonnet-5': {
      label: 'Claude Sonnet 5',
      ...anthropicImages,
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      thinking: ['adaptive'],
      fixedSampling: true,
      pricing: million(2, 0.2, 10, 2.5),
    },
    'claude-opus-5': {
      label: 'Claude Opus 5',
      ...anthropicImages,
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      thinking: ['adaptive'],
      fixedSampling: true,
      pricing: million(5, 0.5, 25, 6.25),
    },
    'claude-opus-4-6': {
      label: 'Claude Opus 4.6',
      ...anthropicImages,
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      thinking: ['adaptive', 'budget'],
      pricing: million(5, 0.5, 25, 6.25),
    },
    'claude-sonnet-4-6': {
      label: 'Claude Sonnet 4.6',
      ...anthropicImages,
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      thinking: ['adaptive', 'budget'],
      pricing: million(3, 0.3, 15, 3.75),
    },
    'claude-opus-4-5': {
      label: 'Claude Opus 4.5',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      thinking: ['budget'],
      pricing: million(5, 0.5, 25, 6.25),
    },
    'claude-opus-4-1': {
      label: 'Claude Opus 4.1',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 32_000,
      reasoning: true,
      thinking: ['budget'],
      pricing: million(15, 1.5, 75, 18.75),
    },
    'claude-opus-4-0': {
      label: 'Claude Opus 4',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 32_000,
      reasoning: true,
      thinking: ['budget'],
      pricing: million(15, 1.5, 75, 18.75),
    },
    'claude-sonnet-4-5': {
      label: 'Claude Sonnet 4.5',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      thinking: ['budget'],
      pricing: million(3, 0.3, 15, 3.75),
    },
    'claude-sonnet-4-0': {
      label: 'Claude Sonnet 4',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      thinking: ['budget'],
      pricing: million(3, 0.3, 15, 3.75),
    },
    'claude-3-7-sonnet': {
      label: 'Claude Sonnet 3.7',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      thinking: ['budget'],
      pricing: million(3, 0.3, 15, 3.75),
    },
    'claude-haiku-4-5': {
      label: 'Claude Haiku 4.5',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      thinking: ['budget'],
      pricing: million(1, 0.1, 5, 1.25),
    },
    'claude-3-5-haiku': {
      label: 'Claude Haiku 3.5',
      ...anthropicImages,
      contextWindow: 200_000,
      maxOutputTokens: 8_192,
      pricing: million(0.8, 0.08, 4, 1),
    },
  },
};

// Other names vendors accept for the same model.
const aliases: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  deepseek: { 'deepseek-flash': 'deepseek-v4-flash' },
  anthropic: {
    'claude-opus-4': 'claude-opus-4-0',
    'claude-sonnet-4': 'claude-sonnet-4-0',
    'claude-opus-4-1-20250805': 'claude-opus-4-1',
    'claude-opus-4-20250514': 'claude-opus-4-0',
    'claude-sonnet-4-20250514': 'claude-sonnet-4-0',
    'claude-3-7-sonnet-20250219': 'claude-3-7-sonnet',
    'claude-3-5-haiku-20241022': 'claude-3-5-haiku',
  },
};

/**
 * Conservative facts for a model nobody described: a small context window (so compaction starts early
 * rather than late) and a modest output limit; no pricing, so its cost shows as unknown, never invented.
 */
export const unknownModelDefaults: Readonly<CatalogModel> = Object.freeze({
  contextWindow: 32_000,
  maxOutputTokens: 4_096,
});

/** Where a model's facts came from. */
export type ModelInfoSource = 'config' | 'catalog' | 'default';

/** A model's facts and their source. */
export interface ResolvedModelInfo {
  info: ModelInfo;
  source: ModelInfoSource;
}

/** The catalog's canonical name of a model: aliases and dated snapshots (`-20250929`, `-2025-08-07`, `-latest`) map to their family. */
export function canonicalModelName(provider: string, model: string): string {
  const table = modelCatalog[provider] ?? {};
  if (table[model] !== undefined) return model;
  const aliased = aliases[provider]?.[model];
  if (aliased !== undefined) return aliased;
  const undated = model.replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, '');
  if (table[undated] !== undefined) return undated;
  return aliases[provider]?.[undated] ?? model;
}

/** The catalog row of a model (aliases and dated snapshots resolved), or undefined. */
export function lookupModel(provider: string, model: string): CatalogModel | undefined {
  return modelCatalog[provider]?.[canonicalModelName(provider, model)];
}

/**
 * A model's facts: a config override (merged field by field over the catalog), else the catalog, else
 * the conservative defaults.
 */
export function resolveModelInfo(
  provider: string,
  model: string,
  override?: Partial<ModelInfo> | undefined,
): ResolvedModelInfo {
  const known = lookupModel(provider, model);
  if (override !== undefined) {
    const base: ModelInfo = known ?? unknownModelDefaults;
    const info: ModelInfo = { ...base, ...override };
    if (override.pricing !== undefined) info.pricing = { ...base.pricing, ...override.pricing };
    return { info, source: 'config' };
  }
  if (known !== undefined) return { info: known, source: 'catalog' };
  return { info: unknownModelDefaults, source: 'default' };
}

/** The catalog's models of a provider. */
export function catalogModels(provider: string): string[] {
  return Object.keys(modelCatalog[provider] ?? {});
}
