import { ConfigError } from './config-error.ts';

/** A route written as `provider/model`. */
export interface ModelId {
  provider: string;
  model: string;
}

/**
 * Parses `provider/model` (the model part may itself contain slashes, as OpenRouter's do); throws
 * ConfigError `INVALID_MODEL_ID` with an example for anything else.
 */
export function parseModelId(text: string): ModelId {
  const trimmed = typeof text === 'string' ? text.trim() : '';
  const slash = trimmed.indexOf('/');
  if (slash <= 0 || slash === trimmed.length - 1) {
    throw new ConfigError(
      'INVALID_MODEL_ID',
      `model '${String(text)}' must be written provider/model, e.g. deepseek/deepseek-chat`,
    );
  }
  return { provider: trimmed.slice(0, slash), model: trimmed.slice(slash + 1) };
}

/** Writes a route as `provider/model`. */
export function formatModelId(id: ModelId): string {
  return `${id.provider}/${id.model}`;
}
