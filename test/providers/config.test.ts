import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AnthropicProvider,
  OpenAICompatibleProvider,
  createConfiguredProviders,
  createUserMessage,
  defaultConfiguredModel,
  describeProviders,
  loadReinConfig,
  parseModelId,
  providerKeySettings,
  reinHome,
  resolveModelId,
  saveReinConfig,
  setProviderKey,
  validateReinConfig,
} from '../../src/internal.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';
import { collect } from './adapter-conformance.ts';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rein-config-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('Rein home and config file', () => {
  it('uses REIN_HOME, else ~/.rein', () => {
    expect(reinHome({ REIN_HOME: '/tmp/somewhere' })).toBe('/tmp/somewhere');
    expect(reinHome({})).toMatch(/\.rein$/);
  });

  it('reads a missing config as empty and saves it 0600 in a 0700 home', async () => {
    const nested = join(home, 'fresh');
    expect(await loadReinConfig(nested)).toEqual({});
    await saveReinConfig(nested, { defaultModel: 'deepseek/deepseek-chat', permissions: { mode: 'ask' } });
    expect((await stat(nested)).mode & 0o777).toBe(0o700);
    expect((await stat(join(nested, 'config.json'))).mode & 0o777).toBe(0o600);
    expect(await loadReinConfig(nested)).toEqual({
      defaultModel: 'deepseek/deepseek-chat',
      permissions: { mode: 'ask' },
    });
  });

  it('rejects a broken config with a typed error naming the file', async () => {
    await writeFile(join(home, 'config.json'), '{ nope');
    await expect(loadReinConfig(home)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('config.json'),
    });
    await writeFile(join(home, 'config.json'), JSON.stringify({ providers: { local: { kind: 'grpc' } } }));
    await expect(loadReinConfig(home)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('providers.local.kind'),
    });
  });

  it('saves a key without losing other sections, and never shows it back', async () => {
    await saveReinConfig(home, { defaultModel: 'openai/gpt-5', permissions: { rules: [] } });
    await setProviderKey(home, 'deepseek', '  sk-deepseek-1234  ');
    const config = await loadReinConfig(home);
    expect(config).toEqual({
      defaultModel: 'openai/gpt-5',
      permissions: { rules: [] },
      keys: { deepseek: 'sk-deepseek-1234' },
    });
    expect((await stat(join(home, 'config.json'))).mode & 0o777).toBe(0o600);
    const view = await providerKeySettings(home, { OPENAI_API_KEY: 'sk-openai-9999' }).describe();
    expect(view.providers).toEqual([
      { provider: 'deepseek', configured: true, source: 'config', hint: '1234' },
      { provider: 'anthropic', configured: false },
      { provider: 'openai', configured: true, source: 'env:OPENAI_API_KEY', hint: '9999' },
    ]);
    expect(JSON.stringify(view)).not.toContain('sk-deepseek');
    await expect(setProviderKey(home, 'nobody', 'k')).rejects.toMatchObject({ code: 'UNKNOWN_PROVIDER' });
    await expect(setProviderKey(home, 'openai', '   ')).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    expect(await readFile(join(home, 'config.json'), 'utf8')).toContain('"deepseek": "sk-deepseek-1234"');
  });
});

describe('model ids and provider construction', () => {
  it('parses provider/model, keeping slashes inside the model', () => {
    expect(parseModelId('deepseek/deepseek-chat')).toEqual({ provider: 'deepseek', model: 'deepseek-chat' });
    expect(parseModelId('openrouter/meta-llama/llama-3.1-70b')).toEqual({
      provider: 'openrouter',
      model: 'meta-llama/llama-3.1-70b',
    });
    for (const bad of ['deepseek', '/x', 'x/', '']) {
      expect(() => parseModelId(bad)).toThrow(expect.objectContaining({ code: 'INVALID_MODEL_ID' }));
    }
  });

  it('builds adapters only for providers with keys (env wins over config), plus keyless custom ones', () => {
    const { providers } = createConfiguredProviders({
      env: { DEEPSEEK_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' },
      config: {
        keys: { deepseek: 'sk-config', anthropic: 'sk-ant' },
        providers: { ollama: { baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.1'] } },
      },
    });
    expect(providers.map((adapter) => adapter.provider)).toEqual(['deepseek', 'anthropic', 'ollama']);
    expect(providers[0]).toBeInstanceOf(OpenAICompatibleProvider);
    expect(providers[1]).toBeInstanceOf(AnthropicProvider);
    expect((providers[1] as AnthropicProvider).baseUrl).toBe('http://127.0.0.1:9');
    expect(providers[0]!.describeModel?.('deepseek-chat')).toMatchObject({ contextWindow: 128_000 });
    expect(providers[1]!.describeModel?.('claude-sonnet-4-5-20250929')).toMatchObject({
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
    });
    expect(providers[2]!.listModels?.()).toEqual(['llama3.1']);
    expect(providers[2]!.describeModel?.('llama3.1')).toEqual({
      contextWindow: 32_000,
      maxOutputTokens: 4_096,
    });
  });

  it('a config models entry declares image input for a model the catalog does not know', () => {
    const { providers } = createConfiguredProviders({
      env: {},
      config: {
        providers: { ollama: { baseUrl: 'http://127.0.0.1:11434/v1', models: ['llava:13b', 'llama3.1'] } },
        models: { 'ollama/llava:13b': { images: true } },
      },
    });
    expect(providers[0]!.describeModel?.('llava:13b')?.images).toBe(true);
    expect(providers[0]!.describeModel?.('llama3.1')?.images).toBeUndefined();
  });

  it('describes providers for doctor: configured, key variable, base URL, never the key', () => {
    const descriptions = describeProviders({
      env: { OPENAI_API_KEY: 'sk-secret-abcd', OPENAI_BASE_URL: 'https://proxy.example/v1' },
      config: { providers: { lmstudio: { baseUrl: 'http://127.0.0.1:1234/v1' } } },
    });
    expect(descriptions.map(({ models: _models, ...rest }) => rest)).toEqual([
      {
        provider: 'deepseek',
        kind: 'openai-compatible',
        builtin: true,
        configured: false,
        keySource: 'none',
        keyVariable: 'DEEPSEEK_API_KEY',
        baseUrl: 'https://api.deepseek.com',
        baseUrlSource: 'default',
      },
      {
        provider: 'anthropic',
        kind: 'anthropic',
        builtin: true,
        configured: false,
        keySource: 'none',
        keyVariable: 'ANTHROPIC_API_KEY',
        baseUrl: 'https://api.anthropic.com',
        baseUrlSource: 'default',
      },
      {
        provider: 'openai',
        kind: 'openai-compatible',
        builtin: true,
        configured: true,
        keySource: 'env',
        keyVariable: 'OPENAI_API_KEY',
        keyHint: 'abcd',
        baseUrl: 'https://proxy.example/v1',
        baseUrlSource: 'env',
      },
      {
        provider: 'lmstudio',
        kind: 'openai-compatible',
        builtin: false,
        configured: true,
        keySource: 'not-required',
        baseUrl: 'http://127.0.0.1:1234/v1',
        baseUrlSource: 'config',
      },
    ]);
    expect(JSON.stringify(descriptions)).not.toContain('sk-secret');
  });

  it('explains a missing key, an unknown provider and an unknown model', () => {
    const inputs = {
      env: { OPENAI_API_KEY: 'sk-x' },
      config: { models: { 'openai/gpt-6': { contextWindow: 1_000_000 } } },
    };
    expect(() => resolveModelId('deepseek/deepseek-chat', inputs)).toThrow(
      expect.objectContaining({
        code: 'MISSING_CREDENTIAL',
        message: expect.stringContaining('DEEPSEEK_API_KEY'),
      }),
    );
    expect(() => resolveModelId('mistral/large', inputs)).toThrow(
      expect.objectContaining({
        code: 'UNKNOWN_PROVIDER',
        message: expect.stringContaining('deepseek, anthropic, openai'),
      }),
    );
    // An undescribed model of a known provider runs, with conservative facts, no price and a warning.
    const unknown = resolveModelId('openai/gpt-7', inputs);
    expect(unknown.info).toEqual({ contextWindow: 32_000, maxOutputTokens: 4_096 });
    expect(unknown.warning).toMatch(
      /^Rein does not know openai\/gpt-7; it runs with a 32,000-token context assumption and no price, so its cost is not counted\. .*Known: gpt-5\.5, .*gpt-6\.$/,
    );
    expect(resolveModelId('openai/gpt-6', inputs).info).toEqual({
      contextWindow: 1_000_000,
      maxOutputTokens: 4_096,
    });
    expect(resolveModelId('openai/gpt-4o-2024-08-06', inputs).info).toMatchObject({ contextWindow: 128_000 });
  });

  it('picks the configured default, else the first keyed built-in', () => {
    expect(defaultConfiguredModel({ env: {}, config: {} })).toBeUndefined();
    expect(defaultConfiguredModel({ env: { ANTHROPIC_API_KEY: 'k' }, config: {} })).toBe(
      'anthropic/claude-sonnet-4-6',
    );
    expect(
      defaultConfiguredModel({ env: { ANTHROPIC_API_KEY: 'k' }, config: { defaultModel: 'openai/gpt-5' } }),
    ).toBe('openai/gpt-5');
  });

  it('refuses model facts that would shape every request wrongly, naming the key', () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ thinking: 'adaptive' }, 'models.anthropic/x.thinking'],
      [{ thinking: ['adaptive', 'lots'] }, 'models.anthropic/x.thinking'],
      [{ thinking: [] }, 'models.anthropic/x.thinking'],
      [{ fixedSampling: 'yes' }, 'models.anthropic/x.fixedSampling'],
      [{ imageBytes: 0 }, 'models.anthropic/x.imageBytes'],
      [{ imageBytes: 1.5 }, 'models.anthropic/x.imageBytes'],
      [{ imageBytes: '5MB' }, 'models.anthropic/x.imageBytes'],
    ];
    for (const [facts, key] of bad) {
      expect(() => validateReinConfig({ models: { 'anthropic/x': facts } })).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining(key) }),
      );
    }
    const good = {
      models: {
        'anthropic/x': { thinking: ['budget', 'adaptive'], fixedSampling: true, imageBytes: 3_000_000 },
      },
    };
    expect(validateReinConfig(good)).toEqual(good);
  });

  it('requires a base URL for a custom provider', () => {
    expect(() => createConfiguredProviders({ env: {}, config: { providers: { vllm: {} } } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('providers.vllm') }),
    );
  });
});

describe('a configured custom provider over HTTP', () => {
  let server: FakeServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('sends its key from the named variable, its headers, and no reasoning replay when told not to', async () => {
    server = await startFakeOpenAIServer([{ text: 'hi from vllm' }]);
    const { providers } = createConfiguredProviders({
      env: { VLLM_KEY: 'token-123' },
      config: {
        providers: {
          vllm: {
            baseUrl: server.url,
            apiKeyEnv: 'VLLM_KEY',
            headers: { 'x-team': 'rein' },
            reasoningReplay: false,
          },
        },
      },
    });
    const adapter = providers.find((candidate) => candidate.provider === 'vllm')!;
    const { response } = await collect(adapter, {
      provider: 'vllm',
      model: 'qwen',
      messages: [createUserMessage('hello')],
      maxTokens: 100,
    });
    expect(response.content).toEqual([{ type: 'text', text: 'hi from vllm' }]);
    const request = server.requests[0]!;
    expect(request.headers.authorization).toBe('Bearer token-123');
    expect(request.headers['x-team']).toBe('rein');
    expect(request.body).toEqual({
      model: 'qwen',
      messages: [{ role: 'user', content: 'hello' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
    });
  });
});
