import { describe, expect, it } from 'vitest';
import {
  costOfUsage,
  formatCost,
  lookupModel,
  modelCatalog,
  resolveModelInfo,
  sessionCost,
} from '../../src/internal.ts';

describe('model catalog', () => {
  it('declares image input as a fact of each model: every OpenAI and Anthropic row, no DeepSeek row', () => {
    for (const provider of ['openai', 'anthropic']) {
      for (const [model, info] of Object.entries(modelCatalog[provider]!)) {
        expect(info.images, `${provider}/${model}`).toBe(true);
      }
    }
    for (const info of Object.values(modelCatalog.deepseek!)) expect(info.images).toBeUndefined();
  });

  it('knows current DeepSeek, OpenAI and Anthropic models with windows, limits and prices', () => {
    for (const provider of ['deepseek', 'openai', 'anthropic']) {
      const models = Object.entries(modelCatalog[provider]!);
      expect(models.length).toBeGreaterThan(1);
      for (const [, info] of models) {
        expect(info.contextWindow).toBeGreaterThan(0);
        expect(info.maxOutputTokens).toBeGreaterThan(0);
        expect(info.pricing!.input).toBeGreaterThan(0);
        expect(info.pricing!.output).toBeGreaterThan(info.pricing!.cachedInput!);
      }
    }
    expect(lookupModel('deepseek', 'deepseek-chat')).toMatchObject({ contextWindow: 128_000 });
  });

  it('resolves aliases and dated snapshots, and nothing else', () => {
    expect(lookupModel('anthropic', 'claude-sonnet-4-5-20250929')).toBe(
      modelCatalog.anthropic!['claude-sonnet-4-5'],
    );
    expect(lookupModel('anthropic', 'claude-sonnet-4-20250514')).toBe(
      modelCatalog.anthropic!['claude-sonnet-4-0'],
    );
    expect(lookupModel('openai', 'gpt-4o-2024-08-06')).toBe(modelCatalog.openai!['gpt-4o']);
    expect(lookupModel('openai', 'gpt-4o-audio-preview')).toBeUndefined();
    expect(lookupModel('nobody', 'gpt-4o')).toBeUndefined();
  });

  it('gives unknown models conservative defaults and lets config override any field', () => {
    expect(resolveModelInfo('ollama', 'llama3.1')).toEqual({
      info: { contextWindow: 32_000, maxOutputTokens: 4_096 },
      source: 'default',
    });
    const overridden = resolveModelInfo('deepseek', 'deepseek-chat', {
      contextWindow: 64_000,
      pricing: { input: 1, output: 2 },
    });
    expect(overridden.source).toBe('config');
    expect(overridden.info).toMatchObject({
      contextWindow: 64_000,
      maxOutputTokens: 8_192,
      pricing: { input: 1, cachedInput: 0.028, output: 2 },
    });
  });
});

describe('cost', () => {
  it('prices uncached input, cache reads, cache writes and output per million tokens', () => {
    const pricing = modelCatalog.anthropic!['claude-sonnet-4-5']!.pricing!;
    const cost = costOfUsage(
      {
        inputTokens: 1_000_000,
        outputTokens: 100_000,
        cacheReadTokens: 2_000_000,
        cacheWriteTokens: 400_000,
      },
      pricing,
    );
    expect(cost).toBeCloseTo(3 + 1.5 + 0.6 + 1.5, 10);
    expect(
      costOfUsage({ inputTokens: 10, outputTokens: 0, cacheReadTokens: 10 }, { input: 1, output: 1 }),
    ).toBeCloseTo(20 / 1e6, 12);
  });

  it('sums a log per turn and per session, counting unpriced responses apart', () => {
    const message = (turn: number, provider: string, model: string, usage?: object) => ({
      type: 'assistant/message',
      data: { turn, message: { source: { kind: 'model', provider, model } }, ...(usage ? { usage } : {}) },
    });
    const events = [
      { type: 'turn/start', data: { turn: 1 } },
      message(1, 'deepseek', 'deepseek-chat', { inputTokens: 1_000_000, outputTokens: 1_000_000 }),
      message(1, 'deepseek', 'deepseek-chat'),
      message(2, 'deepseek', 'deepseek-chat', {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 1_000_000,
      }),
      message(2, 'local', 'x', { inputTokens: 5, outputTokens: 5 }),
    ];
    const result = sessionCost(events, (provider, model) => lookupModel(provider, model)?.pricing);
    expect(result.total.cost).toBeCloseTo(0.28 + 0.42 + 0.028, 10);
    expect(result.total.unpricedResponses).toBe(1);
    expect(result.byTurn.get(1)!.cost).toBeCloseTo(0.7, 10);
    expect(result.byTurn.get(2)).toMatchObject({
      cacheReadTokens: 1_000_000,
      inputTokens: 5,
      unpricedResponses: 1,
    });
    expect(formatCost(result.byTurn.get(1)!.cost)).toBe('$0.70');
    expect(formatCost(0.0012)).toBe('$0.0012');
  });
});

describe('adapters describe catalog models by default', () => {
  it('answers describeModel from the catalog under the provider id', async () => {
    const { OpenAICompatibleProvider, AnthropicProvider } = await import('../../src/index.ts');
    const deepseek = new OpenAICompatibleProvider({ provider: 'deepseek', baseUrl: 'http://127.0.0.1:9' });
    expect(deepseek.describeModel('deepseek-reasoner')).toMatchObject({
      contextWindow: 128_000,
      reasoning: true,
    });
    expect(deepseek.describeModel('nope')).toBeUndefined();
    expect(new AnthropicProvider().describeModel('claude-haiku-4-5-20251001')).toMatchObject({
      maxOutputTokens: 64_000,
    });
  });
});
