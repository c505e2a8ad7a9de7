import type { ContentBlock } from './message.ts';
import type { LlmFailure } from './llm-error.ts';

/** Token counts; input and cache counts are disjoint, reasoning is a subset of output. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/** Why a stream ended. */
export type FinishReason =
  | { kind: 'stop' }
  | { kind: 'tool-calls' }
  | { kind: 'max-tokens' }
  | { kind: 'aborted'; failure: LlmFailure }
  | { kind: 'error'; failure: LlmFailure };

/** The kinds of block a stream can open. */
export type BlockType = ContentBlock['type'];

/** One item of the stream vocabulary every adapter maps its wire format to. */
export type StreamChunk =
  | { type: 'block-start'; index: number; blockType: BlockType }
  | { type: 'text-delta'; index: number; text: string }
  | { type: 'reasoning-delta'; index: number; text: string }
  | { type: 'tool-call-delta'; index: number; id: string; name?: string; argumentsDelta: string }
  | { type: 'block-end'; index: number; block: ContentBlock }
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'finish'; reason: FinishReason; replayState?: unknown };
