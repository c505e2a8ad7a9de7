import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnySessionEvent, Tool, UserMessage } from '../../src/index.ts';
import { createHarness, defineTool } from '../../src/index.ts';
import type { ScriptedResponse } from '../../src/testing/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';

type Action =
  | { kind: 'followup' | 'steer' | 'inject' }
  | { kind: 'cancel'; keepInbox: boolean }
  | { kind: 'wait'; ms: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<Action>({ kind: 'followup' }, { kind: 'steer' }, { kind: 'inject' }),
  },
  { weight: 1, arbitrary: fc.boolean().map<Action>((keepInbox) => ({ kind: 'cancel', keepInbox })) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 4 }).map<Action>((ms) => ({ kind: 'wait', ms })) },
);

const response: fc.Arbitrary<ScriptedResponse> = fc.oneof(
  fc.constant<ScriptedResponse>({ text: 'plain answer' }),
  fc
    .array(fc.record({ tool: fc.constantFrom('par', 'excl'), delay: fc.integer({ min: 0, max: 4 }) }), {
      minLength: 1,
      maxLength: 4,
    })
    .map<ScriptedResponse>((calls) => ({
      text: 'using tools',
      toolCalls: calls.map((call) => ({ name: call.tool, arguments: { delay: call.delay } })),
    })),
  fc.constant<ScriptedResponse>({ text: 'cut', finish: 'max-tokens' }),
  fc.constant<ScriptedResponse>({ error: { code: 'SERVER', message: 'flaky' } }),
);

function delayTool(name: string, parallel: boolean): Tool<never> {
  return defineTool<{ delay: number }>({
    name,
    description: name,
    parameters: { type: 'object', properties: { delay: { type: 'integer' } }, required: ['delay'] },
    isConcurrencySafe: () => parallel,
    execute: ({ delay }, { signal }) =>
      new Promise((resolve, reject) => {
        // The turn's signal outlives the call: the listener goes when the call ends, as a tool's should.
        const onAbort = (): void => {
          clearTimeout(timer);
          reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
        };
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve(`slept ${delay}`);
        }, delay);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
  }) as Tool<never>;
}

function checkInvariants(
  events: readonly AnySessionEvent[],
  sent: UserMessage[],
  pending: Set<string>,
): void {
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
  let openTurn: number | undefined;
  let openStep: number | undefined;
  let lastTurn = 0;
  let lastStep = 0;
  let calls: string[] = [];
  let results: string[] = [];
  const entered = new Map<string, number>();
  const canceled = new Set<string>();
  const claimedInAbortedTurn = new Set<string>();
  const queues: Record<string, UserMessage[]> = { 'next-turn': [], 'next-step': [] };
  let claimedThisTurn: string[] = [];
  for (const event of events) {
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'turn/start':
        expect(openTurn).toBeUndefined();
        expect(data.turn).toBe(++lastTurn);
        openTurn = lastTurn;
        lastStep = 0;
        claimedThisTurn = [];
        break;
      case 'turn/end': {
        expect(data.turn).toBe(openTurn);
        expect(openStep).toBeUndefined();
        const reason = (data.reason as { kind: string }).kind;
        if (reason === 'aborted')
          for (const id of claimedThisTurn) if (!entered.has(id)) claimedInAbortedTurn.add(id);
        openTurn = undefined;
        break;
      }
      case 'step/start':
        expect(openStep).toBeUndefined();
        expect(data.step).toBe(++lastStep);
        openStep = lastStep;
        calls = [];
        results = [];
        break;
      case 'step/end':
        // Every tool/call of the step has exactly one tool/result, in call (model) order.
        expect(results).toEqual(calls);
        openStep = undefined;
        break;
      case 'tool/call':
        calls.push(data.callId as string);
        break;
      case 'tool/result':
        results.push((data.message as { source: { callId: string } }).source.callId);
        break;
      case 'user/message':
        entered.set(data.id as string, (entered.get(data.id as string) ?? 0) + 1);
        break;
      case 'agent/inbox/spliced': {
        const queue = queues[data.target as string]!;
        const removed = queue.splice(
          data.start as number,
          (data.removedCount as number | undefined) ?? 0,
          ...(data.inserted as UserMessage[]),
        );
        for (const message of removed) {
          if (data.outcome === 'canceled') canceled.add(message.id);
          else claimedThisTurn.push(message.id);
        }
        break;
      }
      default:
        break;
    }
  }
  expect(openTurn).toBeUndefined();
  for (const message of sent) {
    const times = entered.get(message.id) ?? 0;
    expect(times).toBeLessThanOrEqual(1);
    if (times === 0) {
      expect(
        canceled.has(message.id) || pending.has(message.id) || claimedInAbortedTurn.has(message.id),
      ).toBe(true);
    }
  }
}

describe('properties over random interleavings of sends, cancels and tool completion orders', () => {
  it('keeps every invariant of the log, and reads back every event as committed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 1, maxLength: 14 }),
        fc.array(response, { maxLength: 10 }),
        async (actions, responses) => {
          const model = new ScriptedProvider({ responses, fallback: { text: 'done' } });
          const harness = createHarness({
            providers: [model],
            tools: [delayTool('par', true), delayTool('excl', false)],
            maxParallelToolCalls: 2,
          });
          // A bounded retry policy so in-band failures exercise the retry path without looping.
          harness.hooks.on('agent/request-error', ({ previousFailures }) =>
            previousFailures.length < 2 ? { kind: 'retry' } : undefined,
          );
          const published: AnySessionEvent[] = [];
          harness.hooks.on('session/event', ({ event }) => {
            published.push(event);
          });
          const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
          const sent: UserMessage[] = [];
          let counter = 0;
          for (const step of actions) {
            switch (step.kind) {
              case 'followup':
              case 'steer':
              case 'inject':
                sent.push(agent[step.kind](`${step.kind} ${counter++}`));
                break;
              case 'cancel':
                agent.cancel({ kind: 'user' }, { keepInbox: step.keepInbox });
                break;
              case 'wait':
                await new Promise((resolve) => setTimeout(resolve, step.ms));
                break;
            }
          }
          await agent.whenIdle();
          expect(agent.status).toBe('idle');
          const pending = new Set(
            [...agent.inbox.list('next-turn'), ...agent.inbox.list('next-step')].map((m) => m.id),
          );
          checkInvariants(agent.session.events, sent, pending);
          // The log reads back exactly what was committed, however it stores each event.
          expect(agent.session.events).toStrictEqual(published);
          expect(JSON.stringify(agent.session.events)).toBe(JSON.stringify(published));
        },
      ),
      { numRuns: 80 },
    );
  });
});
