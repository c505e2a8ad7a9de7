import { describe, expect, it } from 'vitest';
import type { ContentBlock, TokenUsage } from '../../../src/index.ts';
import {
  Session,
  budgetFor,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  estimateMessageTokens,
  measureSession,
  resolveSettings,
  validateCompactionOptions,
} from '../../../src/internal.ts';
import { selectRange } from '../../../src/plugins/compaction/range-selection.ts';
import { openCompactionId } from '../../../src/plugins/compaction/session-lookups.ts';
import { readSurface } from '../../../src/plugins/compaction/surface-nodes.ts';
import { prunedContent } from '../../../src/plugins/compaction/tool-result-pruner.ts';

const source = { kind: 'model' as const, provider: 'p', model: 'm' };

function session(): Session {
  const s = new Session({ header: { version: 0, id: 's1', createdAt: 0 } });
  s.append('turn/start', { turn: 1 });
  s.append('step/start', { turn: 1, step: 1 });
  return s;
}

function header(s: Session, system: string): void {
  s.append('request/header', {
    header: { config: { provider: 'p', model: 'm' }, system },
    reason: 'initial',
  });
}

function answer(s: Session, text: string, usage?: TokenUsage, calls: string[] = []): void {
  const content: ContentBlock[] = [{ type: 'text', text }];
  for (const id of calls) content.push({ type: 'tool-call', id, name: 'read', arguments: '{}' });
  s.append(
    'assistant/message',
    {
      turn: 1,
      step: s.openStep!,
      message: createAssistantMessage(content, source),
      ...(usage ? { usage } : {}),
    },
    { surfaceOp: 'append', sourceEventSeqs: [] },
  );
}

function result(s: Session, id: string, text: string): void {
  const call = s.append('tool/call', {
    turn: 1,
    step: s.openStep!,
    callId: id,
    name: 'read',
    arguments: '{}',
  });
  s.append(
    'tool/result',
    { turn: 1, step: s.openStep!, message: createToolResultMessage(id, [{ type: 'text', text }], false) },
    { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
  );
}

describe('the token meter', () => {
  it('anchors on reported usage while the envelope is unchanged, adding the estimate of what came since', () => {
    const s = session();
    s.append('user/message', createUserMessage('hello'), { surfaceOp: 'append' });
    header(s, 'be brief');
    answer(s, 'reply', { inputTokens: 5_000, outputTokens: 7 }, ['c1']);
    result(s, 'c1', 'x'.repeat(400));
    const nodes = readSurface(s);
    expect(measureSession(s)).toEqual({
      tokens: 5_000 + nodes[1]!.tokens + nodes[2]!.tokens,
      method: 'usage',
    });
    const pending = createUserMessage('and one more thing');
    expect(measureSession(s, [pending]).tokens).toBe(
      5_000 + nodes[1]!.tokens + nodes[2]!.tokens + estimateMessageTokens(pending),
    );
  });

  it('falls back to the estimate when the envelope changed, the usage is implausibly low, or history was replaced', () => {
    const s = session();
    s.append('user/message', createUserMessage('hello'), { surfaceOp: 'append' });
    header(s, 'be brief');
    answer(s, 'reply', { inputTokens: 2, outputTokens: 1 });
    const estimate = (): number => {
      const system = Math.ceil('be brief'.length / 4) + 4;
      return system + readSurface(s).reduce((sum, node) => sum + node.tokens, 0);
    };
    expect(measureSession(s)).toEqual({ tokens: estimate(), method: 'estimate' });

    const t = session();
    t.append('user/message', createUserMessage('hello'), { surfaceOp: 'append' });
    header(t, 'be brief');
    answer(t, 'reply', { inputTokens: 900, outputTokens: 1 });
    expect(measureSession(t).method).toBe('usage');
    t.append('step/end', { turn: 1, step: 1 });
    t.append('step/start', { turn: 1, step: 2 });
    header(t, 'be brief, and polite');
    expect(measureSession(t).method).toBe('estimate');

    const u = session();
    const first = u.append('user/message', createUserMessage('hello'), { surfaceOp: 'append' });
    header(u, 'be brief');
    answer(u, 'reply', { inputTokens: 900, outputTokens: 1 });
    u.append('user/message', createUserMessage('summary'), {
      surfaceOp: { op: 'replace', start: first.seq, end: first.seq },
      sourceEventSeqs: [first.seq],
    });
    expect(measureSession(u).method).toBe('estimate');
  });
});

describe('range selection', () => {
  it('keeps the retained tail and the newest node, and never separates parallel calls from their results', () => {
    const s = session();
    s.append('user/message', createUserMessage('x'.repeat(400)), { surfaceOp: 'append' });
    answer(s, 'reading two', undefined, ['a', 'b']);
    result(s, 'a', 'x'.repeat(400));
    result(s, 'b', 'x'.repeat(400));
    const nodes = readSurface(s);
    // Retaining only the newest node would split call b from its result: the cut moves before the call.
    const range = selectRange(nodes, 0)!;
    expect(range.nodes.map((node) => node.seq)).toEqual([nodes[0]!.seq]);
    expect(range.tokens).toBe(nodes[0]!.tokens);
    expect(selectRange(nodes.slice(0, 1), 0)).toBeUndefined();
    // A retention larger than everything leaves nothing to compact.
    expect(selectRange(nodes, 1_000_000)).toBeUndefined();
    s.append('step/end', { turn: 1, step: 1 });
    s.append('step/start', { turn: 1, step: 2 });
    answer(s, 'done');
    const after = readSurface(s);
    expect(selectRange(after, 0)!.nodes.map((node) => node.seq)).toEqual(
      after.slice(0, -1).map((node) => node.seq),
    );
  });
});

describe('the tool-result pruner', () => {
  const settings = { thresholdChars: 300, headChars: 40, tailChars: 20 };

  it('keeps head and tail by code point, marks the middle, keeps non-text blocks in order, and is idempotent', () => {
    const text = '😀'.repeat(50) + 'm'.repeat(400) + '🎉'.repeat(30);
    const image: ContentBlock = { type: 'image', mediaType: 'image/png', url: 'file:///a.png' };
    const pruned = prunedContent([image, { type: 'text', text }], settings)!;
    expect(pruned.removedChars).toBe(480 - 60);
    expect(pruned.content[0]).toEqual(image);
    const kept = (pruned.content[1] as { text: string }).text;
    expect(kept.startsWith('😀'.repeat(40) + '\n\n[… 420 characters')).toBe(true);
    expect(kept.endsWith('…]\n\n' + '🎉'.repeat(20))).toBe(true);
    expect(prunedContent(pruned.content, settings)).toBeUndefined();
    expect(prunedContent([{ type: 'text', text: 'short' }], settings)).toBeUndefined();
  });
});

describe('settings', () => {
  it('validates options with a stable code', () => {
    expect(() => validateCompactionOptions({ retainRatio: 0.1, retainTokens: 100 })).toThrow(
      expect.objectContaining({ code: 'INVALID_COMPACTION_OPTIONS' }),
    );
    expect(() => validateCompactionOptions({ thresholdRatio: 1.5 })).toThrow(
      expect.objectContaining({ code: 'INVALID_COMPACTION_OPTIONS' }),
    );
    expect(() => validateCompactionOptions({ overrides: [{ provider: '' }] })).toThrow(
      expect.objectContaining({ code: 'INVALID_COMPACTION_OPTIONS' }),
    );
    expect(() => validateCompactionOptions({ pruning: { thresholdChars: 100 } })).toThrow(
      expect.objectContaining({ code: 'INVALID_COMPACTION_OPTIONS' }),
    );
  });

  it('layers defaults, global options, provider-wide and exact overrides; budgets need retention below the threshold', () => {
    const options = {
      thresholdRatio: 0.7,
      overrides: [
        { provider: 'p', retainTokens: 1_000 },
        { provider: 'p', model: 'big', thresholdRatio: 0.9, maxTokens: 2_000 },
      ],
    };
    expect(resolveSettings(options, { provider: 'q', model: 'big' })).toMatchObject({
      thresholdRatio: 0.7,
      retain: { kind: 'ratio', ratio: 0.16 },
      maxTokens: 8192,
      auto: true,
      maxOverflowRetries: 1,
      compactionRetries: 1,
    });
    const big = resolveSettings(options, { provider: 'p', model: 'big' });
    expect(big).toMatchObject({
      thresholdRatio: 0.9,
      retain: { kind: 'tokens', tokens: 1_000 },
      maxTokens: 2_000,
    });
    expect(budgetFor(big, 10_000)).toEqual({
      contextWindow: 10_000,
      thresholdTokens: 9_000,
      retainTokens: 1_000,
    });
    expect(() => budgetFor(big, 1_000)).toThrow(
      expect.objectContaining({ code: 'INVALID_COMPACTION_OPTIONS' }),
    );
    expect(resolveSettings({ pruning: false }, undefined).pruning).toBeUndefined();
  });
});

describe('the compaction lock', () => {
  it('is held by an unmatched compaction/start and released by its end or a later end-seed', () => {
    const s = session();
    expect(openCompactionId(s)).toBeUndefined();
    s.append('compaction/start', { compactionId: 'k1', turn: 1, trigger: 'pressure' });
    expect(openCompactionId(s)).toBe('k1');
    s.append('compaction/end', { compactionId: 'k1', turn: 1 });
    expect(openCompactionId(s)).toBeUndefined();
    s.append('compaction/start', { compactionId: 'k2', turn: 1, trigger: 'pressure' });
    const resumed = new Session({ header: { version: 0, id: 's1', createdAt: 0 }, seed: s.events });
    expect(openCompactionId(resumed)).toBeUndefined();
  });
});
