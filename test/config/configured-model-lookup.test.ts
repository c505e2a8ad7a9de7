import { describe, expect, it } from 'vitest';
import { configuredModelInfo, configuredModelLookup } from '../../src/config/index.ts';
import type { ReinConfig } from '../../src/config/index.ts';

const config: ReinConfig = {
  models: { 'deepseek/house-model': { contextWindow: 64_000, pricing: { input: 1, output: 2 } } },
};

describe('configuredModelLookup', () => {
  it('answers as configuredModelInfo does, for configured, catalog and unknown models alike', () => {
    const lookup = configuredModelLookup({ env: {}, config });
    const asked: [string, string][] = [
      ['deepseek', 'house-model'],
      ['deepseek', 'deepseek-chat'],
      ['anthropic', 'claude-sonnet-4-5'],
      ['deepseek', 'no-such-model'],
      ['nobody', 'anything'],
    ];
    for (const [provider, model] of asked) {
      expect(lookup(provider, model)).toEqual(configuredModelInfo(provider, model, { env: {}, config }));
    }
    expect(lookup('deepseek', 'house-model')?.pricing).toEqual({ input: 1, output: 2 });
    expect(lookup('nobody', 'anything')).toBeUndefined();
  });

  it('prices from the catalog alone when a provider section is broken', () => {
    // A custom provider without a baseUrl cannot be resolved.
    const broken: ReinConfig = { providers: { house: { models: ['m'] } } };
    const lookup = configuredModelLookup({ env: {}, config: broken });
    expect(lookup('deepseek', 'deepseek-chat')).toEqual(configuredModelInfo('deepseek', 'deepseek-chat'));
    expect(lookup('deepseek', 'deepseek-chat')?.pricing).toBeDefined();
  });
});
