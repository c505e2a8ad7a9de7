import { describe, expect, it } from 'vitest';
import type { ApprovalDecision, ApprovalRequest } from '../../src/index.ts';
import { deferred } from '../../src/testing/index.ts';
import { dataOf, fixture, readFileTool, types } from './support.ts';

// The seed's running example: you press Enter, the model reads a file behind an approval dialog,
// then summarizes; and the same with Stop pressed while the dialog is open.
async function runningExample() {
  const script = [
    {
      text: ['Let me ', 'read the README.'],
      toolCalls: [{ id: 'call_read', name: 'read_file', arguments: { path: 'README.md' } }],
      usage: { inputTokens: 120, outputTokens: 20 },
    },
    { text: ['The README ', 'describes Rein.'], usage: { inputTokens: 180, outputTokens: 12 } },
  ];
  const f = await fixture(script, { tools: [readFileTool()] });
  const requested = deferred<ApprovalRequest>();
  const answer = deferred<ApprovalDecision>();
  f.harness.hooks.on('agent/pre-step', async (payload, next) => {
    f.timeline.push(`agent/pre-step:${payload.turn}.${payload.step}`);
    return next();
  });
  f.harness.hooks.on('agent/request', async (payload, next) => {
    f.timeline.push(`agent/request:${payload.turn}.${payload.step}`);
    return next();
  });
  f.harness.hooks.on('agent/turn-stopping', (payload) => {
    f.timeline.push(`agent/turn-stopping:${payload.turn}`);
  });
  // The approval policy: reading asks a human (the dialog), who answers later.
  f.harness.hooks.on('tools/pre-execute', async () => ({
    kind: 'ask',
    reason: 'read outside the allow list',
  }));
  f.harness.approvals.attach({
    notify: (request) => {
      f.timeline.push('approval-dialog');
      requested.resolve(request);
      return answer.promise;
    },
  });
  return { ...f, requested, answer };
}

describe('the seed running example', () => {
  it('followup → claim → pre-step → read_file behind approval → step 2 → turn-stopping → idle', async () => {
    const f = await runningExample();
    const prompt = f.agent.followup('Summarize the README');
    // By the time followup returns: inserted, running, turn/start, the claim (seed §7.1).
    expect(f.agent.status).toBe('running');
    expect(types(f.agent)).toEqual(['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced']);

    const request = await f.requested.promise;
    expect(request).toMatchObject({ callId: 'call_read', name: 'read_file', turn: 1, step: 1 });
    expect(f.agent.status).toBe('running');
    expect(f.agent.session.openTurn).toBe(1);
    f.answer.resolve({ decision: 'allow-once' });
    await f.agent.whenIdle();

    expect(f.timeline).toEqual([
      'log:agent/inbox/spliced',
      'agent/inbox/inserted',
      'agent/status:running',
      'log:turn/start',
      'log:agent/inbox/spliced',
      'agent/inbox/claimed',
      'agent/pre-step:1.1',
      'log:step/start',
      'log:user/message',
      'agent/request:1.1',
      'log:request/header',
      'log:request/context',
      'log:assistant/message',
      'log:tool/call',
      'log:tool/approval-requested',
      'approval-dialog',
      'log:tool/approval-decided',
      'log:tool/result',
      'log:step/end',
      'agent/pre-step:1.2',
      'log:step/start',
      'agent/request:1.2',
      'log:assistant/message',
      'log:step/end',
      'agent/turn-stopping:1',
      'log:turn/end',
      'agent/status:idle',
    ]);

    const events = f.agent.session.events;
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
    expect(dataOf(f.agent, 'turn/start')).toEqual([{ turn: 1 }]);
    expect(dataOf(f.agent, 'step/start')).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
    ]);
    expect(dataOf(f.agent, 'agent/inbox/spliced')).toEqual([
      { target: 'next-turn', start: 0, inserted: [prompt] },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
    ]);
    expect(dataOf(f.agent, 'user/message')).toEqual([prompt]);
    expect(dataOf(f.agent, 'tool/call')).toEqual([
      { turn: 1, step: 1, callId: 'call_read', name: 'read_file', arguments: '{"path":"README.md"}' },
    ]);
    const decided = dataOf<{ decision: string; callId: string }>(f.agent, 'tool/approval-decided');
    expect(decided).toMatchObject([{ decision: 'allow-once', callId: 'call_read' }]);
    const [result] = dataOf<{ message: { content: { content: { text: string }[] }[] }; error?: unknown }>(
      f.agent,
      'tool/result',
    );
    expect(result!.error).toBeUndefined();
    expect(result!.message.content[0]!.content[0]!.text).toBe('contents of README.md');
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);

    // The assistant message cites exactly its chunks, and the second request saw the tool result.
    const firstMessage = events.find((event) => event.type === 'assistant/message')!;
    const cited = firstMessage.sourceEventSeqs!;
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.every((seq) => events[seq]!.type === 'assistant/chunk')).toBe(true);
    const second = f.model.requests[1]!;
    expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(second.messages[2]!.content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'call_read' });
    expect(f.agent.status).toBe('idle');
  });

  it('Stop during the approval dialog: agent/cancelled {user}, an error result, step/end, turn/end aborted, idle', async () => {
    const f = await runningExample();
    f.agent.followup('Summarize the README');
    await f.requested.promise;
    f.agent.cancel({ kind: 'user' });
    await f.agent.whenIdle();

    expect(types(f.agent)).toEqual([
      'agent/inbox/spliced',
      'turn/start',
      'agent/inbox/spliced',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'assistant/message',
      'tool/call',
      'tool/approval-requested',
      'agent/cancelled',
      'tool/approval-decided',
      'tool/result',
      'step/end',
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'agent/cancelled')).toEqual([{ cause: { kind: 'user' } }]);
    expect(dataOf(f.agent, 'tool/approval-decided')).toMatchObject([{ decision: 'aborted' }]);
    expect(dataOf(f.agent, 'tool/result')).toMatchObject([
      { error: { name: 'AbortError', code: 'ABORTED_BEFORE_DISPATCH' } },
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'aborted' } }]);
    expect(f.agent.status).toBe('idle');
    expect(f.timeline.at(-1)).toBe('agent/status:idle');
    // The model was asked once: nothing ran after Stop.
    expect(f.model.requests).toHaveLength(1);

    // The next message works.
    f.model.push({ text: 'Hello again.' });
    f.agent.followup('hi');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'turn/end').at(-1)).toEqual({ turn: 2, reason: { kind: 'completed' } });
  });
});
