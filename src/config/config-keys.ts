import type { ReinConfig } from './rein-config.ts';

/** The shape of a config section Rein reads: fixed fields, or a map from free names to one shape. */
export type ConfigKeyShape =
  | { readonly kind: 'value' }
  | { readonly kind: 'fields'; readonly fields: Readonly<Record<string, ConfigKeyShape>> }
  | { readonly kind: 'map'; readonly entry: ConfigKeyShape };

const value: ConfigKeyShape = { kind: 'value' };
const fields = (entries: Record<string, ConfigKeyShape>): ConfigKeyShape => ({
  kind: 'fields',
  fields: entries,
});
const map = (entry: ConfigKeyShape): ConfigKeyShape => ({ kind: 'map', entry });

const modelFacts = fields({
  contextWindow: value,
  maxOutputTokens: value,
  pricing: fields({ input: value, cachedInput: value, cacheWrite: value, output: value }),
  reasoning: value,
  reasoningEffort: value,
  thinking: value,
  fixedSampling: value,
  images: value,
  imageBytes: value,
  imagesPerRequest: value,
  imageBytesPerRequest: value,
  label: value,
});

/**
 * Every key of `config.json` Rein reads, as a tree: the reference for unknown-key warnings and for
 * `rein config set`. A section another module owns joins by adding its shape here.
 */
export const configKeys: ConfigKeyShape = fields({
  defaultModel: value,
  keys: map(value),
  providers: map(
    fields({
      kind: value,
      baseUrl: value,
      apiKeyEnv: value,
      headers: map(value),
      models: { kind: 'value' },
      idleTimeoutMs: value,
      reasoningReplay: value,
      maxTokensField: value,
    }),
  ),
  models: map(modelFacts),
  mcpServers: map(value),
});

/** One key of a config file that Rein does not read, with the nearest key it does read. */
export interface UnknownConfigKey {
  /** The dotted path, e.g. `providers.ollama.baseURL`. */
  path: string;
  /** The nearest known key at that place, when one is close enough to be a likely typo. */
  suggestion?: string;
}

/** Lists the keys of a config that Rein does not read (misspellings, stale sections), with suggestions. */
export function unknownConfigKeys(config: ReinConfig): UnknownConfigKey[] {
  const found: UnknownConfigKey[] = [];
  walk(config, configKeys, [], found);
  return found;
}

/** One warning line per unknown key: `config.json: unknown key 'defaultModle' (did you mean 'defaultModel'?)`. */
export function describeUnknownConfigKeys(config: ReinConfig, path: string): string[] {
  return unknownConfigKeys(config).map(
    (key) =>
      `${path}: unknown key '${key.path}'${key.suggestion !== undefined ? ` (did you mean '${key.suggestion}'?)` : ''}; Rein ignores it`,
  );
}

/** The shape at a dotted path, or undefined when Rein reads no such key. */
export function configKeyShape(path: readonly string[]): ConfigKeyShape | undefined {
  let shape: ConfigKeyShape | undefined = configKeys;
  for (const part of path) {
    if (shape === undefined || shape.kind === 'value') return undefined;
    shape = shape.kind === 'map' ? shape.entry : shape.fields[part];
  }
  return shape;
}

/** The nearest known key to a misspelled one at a path, if any is within a small edit distance. */
export function suggestConfigKey(path: readonly string[]): string | undefined {
  const parent = configKeyShape(path.slice(0, -1));
  const last = path.at(-1);
  if (parent?.kind !== 'fields' || last === undefined) return undefined;
  const nearest = nearestName(last, Object.keys(parent.fields));
  return nearest === undefined ? undefined : [...path.slice(0, -1), nearest].join('.');
}

function walk(
  node: unknown,
  shape: ConfigKeyShape,
  path: readonly string[],
  found: UnknownConfigKey[],
): void {
  if (shape.kind === 'value' || typeof node !== 'object' || node === null || Array.isArray(node)) return;
  for (const [key, child] of Object.entries(node)) {
    const childPath = [...path, key];
    if (shape.kind === 'map') {
      walk(child, shape.entry, childPath, found);
      continue;
    }
    const childShape = shape.fields[key];
    if (childShape === undefined) {
      const entry: UnknownConfigKey = { path: childPath.join('.') };
      const suggestion = suggestConfigKey(childPath);
      if (suggestion !== undefined) entry.suggestion = suggestion;
      found.push(entry);
      continue;
    }
    walk(child, childShape, childPath, found);
  }
}

function nearestName(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // A third of the name (at least 2 edits) separates a typo from a different word.
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
