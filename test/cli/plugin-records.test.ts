import { describe, expect, it } from 'vitest';
import { describePluginRecord } from '../../src/cli/plugin-records.ts';
import type { AnySessionEvent } from '../../src/index.ts';

function record(type: string, data: unknown): AnySessionEvent {
  return { type, seq: 7, time: 0, data } as AnySessionEvent;
}

describe('plugin records as terminal lines', () => {
  it('describes every budget record: reached, raised and stopped', () => {
    expect(
      describePluginRecord(
        record('budget/reached', { turn: 1, step: 2, limit: 'turn.costUsd', used: 0.0123, max: 0.01 }),
      ),
    ).toBe('■ budget reached (turn.costUsd: $0.0123/$0.01); the work is paused');
    expect(describePluginRecord(record('budget/raised', { perSession: { tokens: 400, steps: null } }))).toBe(
      '◎ budget changed: session.tokens 400, session.steps unlimited',
    );
    expect(describePluginRecord(record('budget/stopped', { reachedSeq: 5 }))).toBe(
      '■ stopped at the budget: the paused work was dropped',
    );
    expect(describePluginRecord(record('turn/start', { turn: 1 }))).toBeUndefined();
  });
});
