import type { ContentBlock, ModelInfo, TokenUsage } from '../llm/index.ts';
import type { CancelCause, TranscriptImage, TurnUsage } from './transcript-item.ts';

// The small pure pieces the transcript fold is built from: words for causes, text, usage sums.

/** A model's prices, per million tokens, as the catalog reports them. */
export type TranscriptPricing = NonNullable<ModelInfo['pricing']>;

/** A usage record whose counts can be added to. */
export type UsageTotals = { -readonly [Key in keyof TurnUsage['usage']]: TurnUsage['usage'][Key] };

/** The cause of a cancellation in words, e.g. "Stopped by you". */
export function describeCancelCause(cause: CancelCause): string {
  switch (cause.kind) {
    case 'user':
      return 'Stopped by you';
    case 'parent':
      return 'Stopped because the parent agent stopped';
    case 'disposed':
      return 'Stopped because the session was closed';
    case 'hook':
      return `Stopped by a plugin: ${cause.reason}`;
  }
}

/** The US-dollar price of some tokens at a model's prices per million tokens. */
export function priceOf(usage: TokenUsage, pricing: TranscriptPricing): number {
  return (
    (usage.inputTokens * pricing.input +
      (usage.cacheReadTokens ?? 0) * (pricing.cachedInput ?? pricing.input) +
      (usage.cacheWriteTokens ?? 0) * (pricing.cacheWrite ?? pricing.input) +
      usage.outputTokens * pricing.output) /
    1_000_000
  );
}

/** The text blocks of some content, joined. */
export function textOf(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

const noImages: readonly TranscriptImage[] = Object.freeze([]);

/** The image blocks of some content as transcript parts (one shared empty list when there are none). */
export function imagesOf(content: readonly ContentBlock[]): readonly TranscriptImage[] {
  let images: TranscriptImage[] | undefined;
  for (const block of content) {
    if (block.type !== 'image') continue;
    const data = block.data;
    // Base64 decodes to three bytes per four characters, less the padding.
    const padding = data === undefined ? 0 : data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
    (images ??= []).push({
      kind: 'image',
      mediaType: block.mediaType,
      ...(data !== undefined ? { bytes: Math.max(0, Math.floor((data.length * 3) / 4) - padding) } : {}),
      ...(block.url !== undefined ? { url: block.url } : {}),
    });
  }
  return images ?? noImages;
}

/** The session a tool result's meta names by `childSessionId` (a subagent's). */
export function childSessionOf(meta: unknown): string | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const child = (meta as { childSessionId?: unknown }).childSessionId;
  return typeof child === 'string' ? child : undefined;
}

/** An empty block of a type, for a stream that starts it. */
export function emptyBlock(type: ContentBlock['type']): ContentBlock {
  if (type === 'reasoning') return { type: 'reasoning', text: '' };
  if (type === 'tool-call') return { type: 'tool-call', id: '', name: '', arguments: '' };
  return { type: 'text', text: '' };
}

/** Zero tokens. */
export function emptyUsage(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** Adds one response's tokens to a total. */
export function addUsage(total: UsageTotals, usage: TokenUsage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheReadTokens += usage.cacheReadTokens ?? 0;
  total.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
}
