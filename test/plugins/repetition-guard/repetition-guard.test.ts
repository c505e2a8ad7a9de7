import { describe, expect, it } from 'vitest';
import type { Tool, UserMessage } from '../../../src/index.ts';
import {
  callFingerprint,
  canonicalArguments,
  defineTool,
  repetitionGuardPlugin,
} from '../../../src/internal.ts';
import { dataOf, plotOf, pluginFixture, readTool, writeTool } from '../goals/plugin-fixture.ts';

const writeCall = (id: string, args: unknown = { path: 'out.txt' }) => ({
  toolCalls: [{ id, name: 'write_file', arguments: args }],
});

function statusTool(): Tool<never> {
  return defineTool<Record<string, never>>({
    name: 'job_status',
    description: 'Poll a job',
    polling: true,
    parameters: { type: 'object', properties: {} },
    execute: () => 'still running',
  }) as Tool<never>;
}

describe('repetition guard', () => {
  it('fingerprints by name and canonical arguments', () => {
    expect(canonicalArguments('{ "b": [1, {"d": 2, "c": 3}], "a": 1 }')).toBe(
      '{"a":1,"b":[1,{"c":3,"d":2}]}',
    );
    expect(callFingerprint('w', '{"a":1,"b":2}')).toBe(callFingerprint('w', '{ "b": 2, "a": 1 }'));
    expect(callFingerprint('w', '{"a":1}')).not.toBe(callFingerprint('v', '{"a":1}'));
    expect(callFingerprint('w', '{"a":1}')).not.toBe(callFingerprint('w', '{"a":2}'));
    expect(callFingerprint('w', 'not json')).toBe(callFingerprint('w', 'not json'));
  });

  it('identical mutating calls: a nudge at the third, a stop at the fifth, queued input kept', async () => {
    const writes: string[] = [];
    // Whitespace differs between calls: canonically they are still identical.
    const script = [1, 2, 3, 4, 5].map((n) =>
      writeCall(`w${n}`, n % 2 === 0 ? '{"path":"out.txt"}' : '{ "path" : "out.txt" }'),
    );
    const f = await pluginFixture([...script, { text: 'never sent' }], {
      plugins: [repetitionGuardPlugin()],
      tools: [writeTool(writes)],
    });
    f.harness.hooks.on('tools/result', ({ call }) => {
      // While the fifth call runs, the user steers and queues a follow-up.
      if (call.callId === 'w5') {
        f.agent.steer('Also update the docs');
        f.agent.followup('Next question');
      }
    });
    f.agent.followup('Write out.txt');
    await f.agent.whenIdle();

    expect(writes).toHaveLength(5);
    expect(f.model.requests).toHaveLength(5);
    const fingerprint = callFingerprint('write_file', '{"path":"out.txt"}');
    // The nudge was injected with the third call and rode the fourth request.
    const nudges = dataOf<UserMessage>(f.agent, 'user/message').filter(
      (message) => message.source.kind === 'plugin',
    );
    expect(nudges.map((message) => message.source)).toEqual([
      { kind: 'plugin', plugin: 'repetition-guard', form: 'nudge', fingerprint, count: 3 },
    ]);
    expect(f.model.requests[3]!.messages.at(-1)).toMatchObject({ source: { form: 'nudge' } });
    expect(dataOf(f.agent, 'guard/stopped')).toEqual([
      {
        turn: 1,
        fingerprint,
        count: 5,
        name: 'write_file',
        message:
          'Stopped: write_file was called 5 times in this turn with identical arguments. Queued messages are kept; send a message to continue differently.',
      },
    ]);
    expect(plotOf(f.agent).slice(-9)).toEqual([
      'tool/call',
      'agent/inbox/spliced', // the steer
      'agent/inbox/spliced', // the follow-up
      'tool/result',
      'step/end',
      'agent/inbox/spliced', // step 6's claim of the steer
      'guard/stopped',
      'agent/inbox/spliced', // the steer put back
      'turn/end',
    ]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'blocked' } }]);
    expect(f.agent.inbox.list('next-step').map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'Also update the docs' }],
    ]);
    expect(f.agent.inbox.list('next-turn').map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'Next question' }],
    ]);
    expect(f.agent.status).toBe('idle');
    expect(f.listenerErrors).toEqual([]);
  });

  it('identical reads and polling calls never stop the turn; differing writes are counted apart', async () => {
    const read = { toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: 'a' } }] };
    const poll = { toolCalls: [{ id: 'p', name: 'job_status', arguments: {} }] };
    const script = [
      ...[1, 2, 3, 4, 5, 6].map(() => read),
      ...[1, 2, 3, 4, 5, 6].map(() => poll),
      ...[1, 2, 3, 4, 5, 6].map((n) => writeCall(`w${n}`, { path: `file-${n % 3}.txt` })),
      { text: 'done' },
    ];
    const f = await pluginFixture(script, {
      plugins: [repetitionGuardPlugin()],
      tools: [readTool(), statusTool(), writeTool()],
    });
    f.agent.followup('Go');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'guard/stopped')).toEqual([]);
    expect(dataOf<UserMessage>(f.agent, 'user/message')).toHaveLength(1);
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
    expect(f.model.requests).toHaveLength(19);
  });

  it('counts per turn: a new turn starts from zero', async () => {
    const script = [
      writeCall('a1'),
      writeCall('a2'),
      { text: 'first done' },
      writeCall('b1'),
      writeCall('b2'),
      { text: 'second done' },
    ];
    const f = await pluginFixture(script, {
      plugins: [repetitionGuardPlugin({ nudgeAt: 3, stopAt: 4 })],
      tools: [writeTool()],
    });
    f.agent.followup('one');
    f.agent.followup('two');
    await f.agent.whenIdle();
    expect(dataOf(f.agent, 'guard/stopped')).toEqual([]);
    expect(dataOf(f.agent, 'turn/end')).toEqual([
      { turn: 1, reason: { kind: 'completed' } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
  });

  it('rejects thresholds that would stop every call', () => {
    expect(() => repetitionGuardPlugin({ stopAt: 1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });
});
