import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { ModelInfo } from '../llm/index.ts';
import { ConfigError } from './config-error.ts';

/** How one provider is reached; for a custom provider `baseUrl` is required. */
export interface ProviderConfig {
  /** The wire protocol; `openai-compatible` by default for custom providers. */
  kind?: 'openai-compatible' | 'anthropic';
  baseUrl?: string;
  /** The environment variable holding the key; a custom provider without one needs no key (Ollama…). */
  apiKeyEnv?: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The models it serves: names, or names with facts (context window, output limit, prices). */
  models?: string[] | Record<string, Partial<ModelInfo>>;
  /** Longest silence allowed on a stream, in milliseconds. */
  idleTimeoutMs?: number;
  /** OpenAI-compatible: send `reasoning_content` back (DeepSeek-style thinking with tools). */
  reasoningReplay?: boolean;
  /** OpenAI-compatible: the output-limit field. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

/** Rein's config file (`<home>/config.json`); sections other modules own are kept as they are. */
export interface ReinConfig {
  /** The default route, `provider/model`. */
  defaultModel?: string;
  /** Provider keys saved with `setProviderKey` (the file is 0600); environment variables win over them. */
  keys?: Record<string, string>;
  /** Base URLs of built-in providers, and custom OpenAI-compatible (or Anthropic) providers. */
  providers?: Record<string, ProviderConfig>;
  /** Facts about models by `provider/model`, overriding the catalog (or describing a model it lacks). */
  models?: Record<string, Partial<ModelInfo>>;
  [section: string]: unknown;
}

/** Rein's home: `REIN_HOME`, else `~/.rein`; always absolute. */
export function reinHome(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const chosen =
    env.REIN_HOME !== undefined && env.REIN_HOME !== '' ? env.REIN_HOME : join(homedir(), '.rein');
  return isAbsolute(chosen) ? chosen : resolve(chosen);
}

/** The config file of a home. */
export function reinConfigPath(home: string): string {
  return join(home, 'config.json');
}

/** Reads `<home>/config.json`; a missing file is an empty config, a broken one a ConfigError naming the file. */
export async function loadReinConfig(home: string): Promise<ReinConfig> {
  const path = reinConfigPath(home);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return {};
    throw new ConfigError('INVALID_CONFIG', `cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError('INVALID_CONFIG', `${path} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return validateReinConfig(value, path);
}

/** Writes `<home>/config.json` atomically: the home is created 0700, the file is 0600. */
export async function saveReinConfig(home: string, config: ReinConfig): Promise<void> {
  const path = reinConfigPath(home);
  validateReinConfig(config, path);
  await mkdir(home, { recursive: true, mode: 0o700 });
  await chmod(home, 0o700);
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/** Checks the shape of a config; throws ConfigError naming the offending field. */
export function validateReinConfig(value: unknown, path = 'config'): ReinConfig {
  const fail = (field: string, expected: string): never => {
    throw new ConfigError('INVALID_CONFIG', `${path}: ${field} must be ${expected}`);
  };
  if (!isRecord(value)) return fail('the top level', 'a JSON object');
  if (value.defaultModel !== undefined && typeof value.defaultModel !== 'string')
    fail('defaultModel', 'a string');
  for (const section of ['keys', 'providers', 'models'] as const) {
    if (value[section] !== undefined && !isRecord(value[section])) fail(section, 'an object');
  }
  for (const [provider, key] of Object.entries((value.keys as Record<string, unknown> | undefined) ?? {})) {
    if (typeof key !== 'string') fail(`keys.${provider}`, 'a string');
  }
  for (const [provider, entry] of Object.entries(
    (value.providers as Record<string, unknown> | undefined) ?? {},
  )) {
    if (!isRecord(entry)) fail(`providers.${provider}`, 'an object');
    const config = entry as Record<string, unknown>;
    if (config.kind !== undefined && config.kind !== 'openai-compatible' && config.kind !== 'anthropic') {
      fail(`providers.${provider}.kind`, "'openai-compatible' or 'anthropic'");
    }
    for (const field of ['baseUrl', 'apiKeyEnv'] as const) {
      if (config[field] !== undefined && typeof config[field] !== 'string')
        fail(`providers.${provider}.${field}`, 'a string');
    }
    if (config.models !== undefined && !Array.isArray(config.models) && !isRecord(config.models)) {
      fail(`providers.${provider}.models`, 'a list of names or an object');
    }
    if (config.headers !== undefined && !isRecord(config.headers))
      fail(`providers.${provider}.headers`, 'an object');
    const timeout = config.idleTimeoutMs;
    if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout > 0))) {
      fail(`providers.${provider}.idleTimeoutMs`, 'a positive number');
    }
  }
  for (const [id, info] of Object.entries((value.models as Record<string, unknown> | undefined) ?? {})) {
    if (!isRecord(info)) fail(`models.${id}`, 'an object');
    if (!id.includes('/')) fail(`models key '${id}'`, 'written provider/model');
    // The facts that shape a request are checked here; a wrong one would make every request fail.
    const facts = info as Record<string, unknown>;
    const thinking = facts.thinking;
    if (
      thinking !== undefined &&
      !(
        Array.isArray(thinking) &&
        thinking.length > 0 &&
        thinking.every((mode) => mode === 'budget' || mode === 'adaptive')
      )
    ) {
      fail(`models.${id}.thinking`, "a list of 'budget' and/or 'adaptive'");
    }
    if (facts.fixedSampling !== undefined && typeof facts.fixedSampling !== 'boolean') {
      fail(`models.${id}.fixedSampling`, 'true or false');
    }
    for (const field of ['imageBytes', 'imagesPerRequest', 'imageBytesPerRequest'] as const) {
      const limit = facts[field];
      if (limit !== undefined && !(Number.isSafeInteger(limit) && (limit as number) > 0)) {
        fail(`models.${id}.${field}`, 'a positive whole number');
      }
    }
  }
  return value as ReinConfig;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
