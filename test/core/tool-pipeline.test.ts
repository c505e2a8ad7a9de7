import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/index.ts';
import type { Tool } from '../../src/index.ts';
import { dataOf, fixture } from './support.ts';

const greet = defineTool<{ name: string; times?: number }>({
  name: 'greet',
  description: 'Greets someone',
  parameters: z.object({ name: z.string().min(1), times: z.number().int().positive().optional() }),
  isConcurrencySafe: () => true,
  execute: ({ name, times }) => `hello ${name}`.repeat(times ?? 1),
}) as Tool<never>;

type ResultData = {
  error?: { code: string };
  meta?: unknown;
  message: { content: { content: { text: string }[] }[] };
};
const textOf = (result: ResultData): string => result.message.content[0]!.content[0]!.text;

describe('tool pipeline', () => {
  it('accepts zod schemas: the model sees JSON Schema, bad fields are named in the error', async () => {
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'ok', name: 'greet', arguments: { name: 'Ada' } },
            { id: 'bad', name: 'greet', arguments: { name: '', times: -1 } },
          ],
        },
        { text: 'x' },
      ],
      { tools: [greet] },
    );
    f.agent.followup('go');
    await f.agent.whenIdle();
    const schema = f.model.requests[0]!.tools![0]!;
    expect(schema.name).toBe('greet');
    expect(schema.parameters).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
    const results = dataOf<ResultData>(f.agent, 'tool/result');
    expect(textOf(results[0]!)).toBe('hello Ada');
    expect(results[1]!.error?.code).toBe('INVALID_ARGUMENTS');
    expect(textOf(results[1]!)).toMatch(/name/);
    expect(textOf(results[1]!)).toMatch(/times/);
  });

  it('tools/post-execute may rewrite content or block with feedback; tools/result sees the final outcome', async () => {
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'a', name: 'greet', arguments: { name: 'A' } },
            { id: 'b', name: 'greet', arguments: { name: 'B' } },
          ],
        },
        { text: 'x' },
      ],
      {
        tools: [greet],
      },
    );
    const finals: string[] = [];
    f.harness.hooks.on('tools/post-execute', async ({ call }, next) => {
      if (call.callId === 'a') return { kind: 'accept', content: [{ type: 'text', text: 'redacted' }] };
      if (call.callId === 'b') return { kind: 'block', feedback: 'policy: no greeting B' };
      return next();
    });
    f.harness.hooks.on('tools/result', ({ call, result }) => {
      finals.push(`${call.callId}:${result.isError}`);
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    const results = dataOf<ResultData>(f.agent, 'tool/result');
    expect(textOf(results[0]!)).toBe('redacted');
    expect(results[1]!.error?.code).toBe('TOOL_BLOCKED');
    expect(textOf(results[1]!)).toBe('policy: no greeting B');
    expect(finals).toEqual(['a:false', 'b:true']);
  });

  it('tools/execute wraps the body; a throwing pre-execute listener becomes an error result, not a crash', async () => {
    const f = await fixture(
      [
        {
          toolCalls: [
            { id: 'a', name: 'greet', arguments: { name: 'A' } },
            { id: 'b', name: 'greet', arguments: { name: 'B' } },
          ],
        },
        { text: 'x' },
      ],
      {
        tools: [greet],
      },
    );
    f.harness.hooks.on('tools/execute', async (_payload, next) => {
      const result = await next();
      return { ...result, meta: { wrapped: true } };
    });
    f.harness.hooks.on('tools/pre-execute', async ({ call }, next) => {
      if (call.callId === 'b') throw new Error('policy engine down');
      return next();
    });
    f.agent.followup('go');
    await f.agent.whenIdle();
    const results = dataOf<ResultData>(f.agent, 'tool/result');
    expect(results[0]!.meta).toEqual({ wrapped: true });
    expect(results[1]!.error?.code).toBe('LISTENER_FAILED');
    expect(dataOf(f.agent, 'turn/end')).toEqual([{ turn: 1, reason: { kind: 'completed' } }]);
  });

  it('deny from pre-execute gives the model the reason', async () => {
    const f = await fixture(
      [{ toolCalls: [{ id: 'a', name: 'greet', arguments: { name: 'A' } }] }, { text: 'x' }],
      { tools: [greet] },
    );
    f.harness.hooks.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'greeting is disabled here' }));
    f.agent.followup('go');
    await f.agent.whenIdle();
    const [result] = dataOf<ResultData>(f.agent, 'tool/result');
    expect(result!.error?.code).toBe('TOOL_DENIED');
    expect(textOf(result!)).toBe('Error: greeting is disabled here');
  });
});
