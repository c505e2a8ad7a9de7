import { ConfigError } from './config-error.ts';
import { describeProviders } from './configured-providers.ts';
import { loadReinConfig, reinConfigPath, saveReinConfig } from './rein-config.ts';

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Saves a provider's API key in `<home>/config.json` (0600); the provider must be built in or
 * configured, the key non-empty. An environment variable still wins over a saved key.
 */
export async function setProviderKey(home: string, provider: string, key: string): Promise<void> {
  const trimmed = typeof key === 'string' ? key.trim() : '';
  if (trimmed === '' || /\s/.test(trimmed)) {
    throw new ConfigError('INVALID_CONFIG', 'an API key must be a non-empty string without spaces');
  }
  const config = await loadReinConfig(home);
  const known = describeProviders({ env: {}, config }).map((entry) => entry.provider);
  if (!known.includes(provider)) {
    throw new ConfigError('UNKNOWN_PROVIDER', `unknown provider '${provider}' (known: ${known.join(', ')})`);
  }
  await saveReinConfig(home, { ...config, keys: { ...config.keys, [provider]: trimmed } });
}

/** One provider's key status as a settings panel shows it: never the key. */
export interface ProviderKeyView {
  provider: string;
  configured: boolean;
  /** `config`, `env:<VARIABLE>`, or `not-required`. */
  source?: string;
  hint?: string;
}

/**
 * The key settings of a home for a UI: `describe()` lists providers with where their key comes from
 * (redacted to a four-character hint); `setProviderKey` saves one. Reads the config afresh each time.
 */
export function providerKeySettings(home: string, env: Environment = process.env) {
  return {
    async describe(): Promise<{ providers: ProviderKeyView[]; configPath: string; help: string }> {
      const config = await loadReinConfig(home);
      const providers = describeProviders({ env, config }).map((entry) => {
        const view: ProviderKeyView = { provider: entry.provider, configured: entry.configured };
        if (entry.keySource === 'env') view.source = `env:${entry.keyVariable ?? ''}`;
        else if (entry.keySource === 'config') view.source = 'config';
        else if (entry.keySource === 'not-required') view.source = 'not-required';
        if (entry.keyHint !== undefined) view.hint = entry.keyHint;
        return view;
      });
      return {
        providers,
        configPath: reinConfigPath(home),
        help: 'Set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY, or save a key here; it is stored in the config file with mode 0600.',
      };
    },
    setProviderKey(provider: string, key: string): Promise<void> {
      return setProviderKey(home, provider, key);
    },
  };
}
