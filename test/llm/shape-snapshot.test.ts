import { describe, expect, it } from 'vitest';
import type { ContentBlock, StreamChunk, TokenUsage } from '../../src/internal.ts';
import {
  LosslessJsonError,
  SessionError,
  assistantMessageData,
  toolResultData,
  createAssistantMessage,
  createToolResultMessage,
  isJsonSnapshot,
  snapshotAt,
  snapshotChunk,
  snapshotJson,
} from '../../src/internal.ts';

// The typed snapshots must give exactly what the general walk gives: the same keys in the same order,
// the same values, frozen at every level; and for anything off their shapes, the walk's own answer.

/** Every object of a value, depth first (to check that each level is frozen). */
function objectsOf(value: unknown): object[] {
  if (typeof value !== 'object' || value === null) return [];
  return [value, ...Object.values(value).flatMap(objectsOf)];
}

/** The outcome of a snapshot: its JSON and key order, or the error it threw. */
function outcome(run: () => unknown): { json?: string; keys?: string; frozen?: boolean; error?: unknown } {
  try {
    const result = run();
    return {
      json: JSON.stringify(result),
      keys: JSON.stringify(objectsOf(result).map((object) => Object.keys(object))),
      frozen: objectsOf(result).every((object) => Object.isFrozen(object)),
    };
  } catch (error) {
    if (!(error instanceof LosslessJsonError)) throw error;
    return { error: { message: error.message, path: error.path } };
  }
}

function expectSameAsWalk(chunk: unknown): void {
  const fast = outcome(() => snapshotChunk(chunk as StreamChunk, 'assistant/chunk', '.data.chunk'));
  const walk = outcome(() => snapshotAt(chunk, 'assistant/chunk', '.data.chunk', 'none'));
  expect(fast).toEqual(walk);
}

const common: unknown[] = [
  { type: 'text-delta', index: 0, text: 'hi' },
  { type: 'reasoning-delta', index: 3, text: '' },
  { type: 'block-start', index: 1, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 1, id: 'c1', argumentsDelta: '{"a":' },
  { type: 'tool-call-delta', index: 1, id: 'c1', name: 'read', argumentsDelta: '' },
  { type: 'block-end', index: 0, block: { type: 'text', text: 'hi' } },
  { type: 'block-end', index: 1, block: { type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' } },
  { type: 'usage', usage: { inputTokens: 10, outputTokens: 0 } },
  { type: 'finish', reason: { kind: 'stop' } },
  { type: 'finish', reason: { kind: 'tool-calls' } },
  { type: 'finish', reason: { kind: 'max-tokens' } },
];

const cycle: Record<string, unknown> = { type: 'block-end', index: 0 };
cycle.block = cycle;
class Delta {
  type = 'text-delta';
  index = 0;
  text = 'x';
}
const nullPrototype = Object.assign(Object.create(null) as object, {
  type: 'text-delta',
  index: 0,
  text: 'x',
});

const offShape: unknown[] = [
  // Bad values the walk rejects.
  { type: 'text-delta', index: -0, text: 'x' },
  { type: 'text-delta', index: Number.NaN, text: 'x' },
  { type: 'text-delta', index: 0, text: 1n },
  { type: 'usage', usage: { inputTokens: Number.POSITIVE_INFINITY, outputTokens: 1 } },
  { type: 'usage', usage: { inputTokens: 1, outputTokens: -0 } },
  { type: 'usage', usage: { inputTokens: 1, outputTokens: 1n } },
  { type: 'block-end', index: 0, block: { type: 'text', text: undefined } },
  { type: 'finish', reason: { kind: 'stop', failure: () => 1 } },
  cycle,
  new Delta(),
  { type: 'block-end', index: 0, block: new Delta() },
  // Valid JSON off the typed shapes: misordered, extra or missing keys, other values.
  { index: 0, type: 'text-delta', text: 'x' },
  { type: 'text-delta', text: 'x', index: 0 },
  { type: 'text-delta', index: 0, text: 'x', extra: true },
  { type: 'text-delta', index: 0 },
  { type: 'text-delta', index: 1.5, text: 'x' },
  { type: 'text-delta', index: '0', text: 'x' },
  { type: 'tool-call-delta', index: 0, name: 'read', id: 'c1', argumentsDelta: '' },
  { type: 'tool-call-delta', index: 0, id: 'c1', name: null, argumentsDelta: '' },
  { type: 'usage', usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3 } },
  { type: 'usage', usage: { outputTokens: 2, inputTokens: 1 } },
  { type: 'usage', usage: { inputTokens: 1.25, outputTokens: 2 } },
  { type: 'finish', reason: { kind: 'stop' }, replayState: { a: [1, 2] } },
  { type: 'finish', reason: { kind: 'other' } },
  { type: 'block-end', index: 0, block: { type: 'image', mediaType: 'image/png', data: 'AA==' } },
  { type: 'block-end', index: 0, block: { text: 'x', type: 'text' } },
  { type: 'block-end', index: 0, block: Object.freeze({ type: 'text', text: 'x' }) },
  Object.freeze({ type: 'text-delta', index: 0, text: 'x' }),
  nullPrototype,
  [1, 2],
  'text',
  null,
];

describe('typed snapshots of stream chunks', () => {
  it('copy the common chunk shapes exactly as the general walk does', () => {
    for (const chunk of common) {
      expectSameAsWalk(chunk);
      const copy = snapshotChunk(chunk as StreamChunk, '$', '');
      expect(copy).not.toBe(chunk);
      expect(copy).toEqual(chunk);
    }
  });

  it('answer every value off those shapes as the walk does: the same copy or the same error', () => {
    for (const chunk of offShape) expectSameAsWalk(chunk);
  });

  it('share a remembered snapshot embedded in a chunk, as the walk does', () => {
    const block = snapshotJson({ type: 'text', text: 'x' } as ContentBlock);
    const chunk = { type: 'block-end', index: 0, block } as StreamChunk;
    const fast = snapshotChunk(chunk, '$', '') as { block: unknown };
    expect(fast.block).toBe(block);
    expect(fast).toEqual(snapshotAt(chunk, '$', '', 'none'));
  });
});

describe('typed snapshots of messages', () => {
  const source = snapshotJson({ kind: 'model' as const, provider: 'p', model: 'm' });
  const contents: ContentBlock[][] = [
    [],
    [{ type: 'text', text: 'hi' }],
    [
      { type: 'text', text: 'a' },
      { type: 'tool-call', id: 'c1', name: 'read', arguments: '{"path":"x"}' },
    ],
    [{ type: 'reasoning', text: 'r', signature: 's' }],
    [{ text: 'misordered', type: 'text' } as ContentBlock],
    [Object.freeze({ type: 'text', text: 'frozen' }) as ContentBlock],
  ];

  it('build an assistant message exactly as the snapshot of the same literal', () => {
    for (const content of contents) {
      for (const messageSource of [
        source,
        { kind: 'model' as const, provider: 'p', model: 'm', replayState: 1 },
      ]) {
        const message = createAssistantMessage(content, messageSource, 'id-1');
        const walk = snapshotJson({ id: 'id-1', role: 'assistant', content, source: messageSource });
        expect(outcome(() => message)).toEqual(outcome(() => walk));
        expect(isJsonSnapshot(message)).toBe(true);
        expect(message.content).not.toBe(content);
      }
    }
  });

  it('build a tool result message exactly as the snapshot of the same literal', () => {
    for (const content of contents) {
      for (const isError of [false, true]) {
        const message = createToolResultMessage('c1', content, isError, 'id-2');
        const block = { type: 'tool-result', toolCallId: 'c1', content, ...(isError ? { isError } : {}) };
        const walk = snapshotJson({
          id: 'id-2',
          role: 'user',
          content: [block],
          source: { kind: 'tool', callId: 'c1' },
        });
        expect(outcome(() => message)).toEqual(outcome(() => walk));
        expect(isJsonSnapshot(message)).toBe(true);
      }
    }
  });

  it('reject bad content with the walk’s error', () => {
    const bad = [{ type: 'text', text: 'x', extra: 1n } as unknown as ContentBlock];
    expect(() => createToolResultMessage('c1', bad, false, 'id')).toThrow(
      'not lossless JSON at $.content[0].content[0].extra: BigInt',
    );
    const badId = [
      { type: 'tool-call', id: 'c', name: 'n', arguments: Number.NaN } as unknown as ContentBlock,
    ];
    expect(() => createAssistantMessage(badId, source, 'id')).toThrow(
      'not lossless JSON at $.content[0].arguments: non-finite number',
    );
  });
});

describe('typed data of the message events', () => {
  const source = snapshotJson({ kind: 'model' as const, provider: 'p', model: 'm' });
  const message = createAssistantMessage([{ type: 'text', text: 'hi' }], source, 'id-3');
  const usages: unknown[] = [
    undefined,
    { inputTokens: 3, outputTokens: 4 },
    { inputTokens: 3, outputTokens: 4, cacheReadTokens: 1, reasoningTokens: 2 },
    { outputTokens: 4, inputTokens: 3 },
    { inputTokens: -0, outputTokens: 4 },
    { inputTokens: 3, outputTokens: 1n },
    { inputTokens: 3, outputTokens: Number.NaN },
    snapshotJson({ inputTokens: 3, outputTokens: 4 }),
  ];

  /** What `append` commits for the same data (the root adopted, its members snapshotted), or its error. */
  function walked(data: object): ReturnType<typeof outcome> {
    return outcome(() => snapshotAt(data, 'assistant/message', '.data', 'root'));
  }

  it('give an assistant message’s data exactly as append’s snapshot would, or its error', () => {
    for (const usage of usages) {
      const data = usage === undefined ? { turn: 2, step: 1, message } : { turn: 2, step: 1, message, usage };
      let built: ReturnType<typeof outcome>;
      try {
        built = outcome(() => assistantMessageData(2, 1, message, usage as TokenUsage | undefined));
      } catch (error) {
        expect(error).toBeInstanceOf(SessionError);
        const { message: text, cause } = error as SessionError & { cause: LosslessJsonError };
        built = { error: { message: text, path: cause.path } };
      }
      expect(built).toEqual(walked(data));
    }
    const data = assistantMessageData(2, 1, message, { inputTokens: 1, outputTokens: 2 });
    expect(data?.message).toBe(message);
  });

  it('leave a message that is no snapshot, and its tool result, to append', () => {
    const plain = { ...message };
    expect(assistantMessageData(1, 1, plain, undefined)).toBeUndefined();
    const result = createToolResultMessage('c1', [{ type: 'text', text: 'ok' }], false, 'id-4');
    expect(toolResultData(1, 2, { ...result })).toBeUndefined();
    const data = toolResultData(1, 2, result);
    expect(data).toEqual({ turn: 1, step: 2, message: result });
    expect(data?.message).toBe(result);
    expect(Object.isFrozen(data)).toBe(true);
  });
});
