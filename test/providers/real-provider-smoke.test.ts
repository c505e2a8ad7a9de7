// Real-provider smoke tests: each runs only when its vendor's key is set, and skips itself otherwise,
// so the default suite never reaches the internet. They use the same configuration path as the app.
import { describe, expect, it } from 'vitest';
import { createConfiguredProviders, createUserMessage } from '../../src/internal.ts';
import { collect } from './adapter-conformance.ts';

const vendors = [
  { provider: 'deepseek', variable: 'DEEPSEEK_API_KEY', model: 'deepseek-chat' },
  { provider: 'openai', variable: 'OPENAI_API_KEY', model: 'gpt-4.1-nano' },
  { provider: 'anthropic', variable: 'ANTHROPIC_API_KEY', model: 'claude-haiku-4-5' },
] as const;

describe('real providers (skipped without a key)', () => {
  for (const vendor of vendors) {
    const key = process.env[vendor.variable];
    it.skipIf(key === undefined || key === '')(
      `${vendor.provider}/${vendor.model} answers a tiny prompt`,
      async () => {
        const { providers } = createConfiguredProviders({ env: process.env });
        const adapter = providers.find((candidate) => candidate.provider === vendor.provider)!;
        const { response } = await collect(adapter, {
          provider: vendor.provider,
          model: vendor.model,
          maxTokens: 32,
          messages: [createUserMessage('Reply with exactly the word: pong')],
        });
        expect(response.finish.kind).toBe('stop');
        expect(JSON.stringify(response.content).toLowerCase()).toContain('pong');
        expect(response.usage?.outputTokens).toBeGreaterThan(0);
      },
      60_000,
    );
  }
});
