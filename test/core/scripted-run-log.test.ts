import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AnySessionEvent, Tool } from '../../src/index.ts';
import { createHarness, defineTool } from '../../src/index.ts';
import { ScriptedProvider } from '../../src/testing/index.ts';
import { readFileTool } from './support.ts';

// The loop's hot path is tuned for speed; this pins what it writes. One scripted run through every kind
// of step (reasoning and text, one call, parallel calls, an unknown tool, invalid arguments, a throwing
// body, max-tokens, a failed request) must log exactly these events, in this order, with these payloads.
// Times and random message ids are the only parts that vary between runs: they are normalized.
const expectedPath = new URL('../fixtures/loop/scripted-run-log.json', import.meta.url);

function failingTool(): Tool<never> {
  return defineTool<{ reason: string }>({
    name: 'explode',
    description: 'Fails',
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string' } },
      required: ['reason'],
      additionalProperties: false,
    },
    execute: (args) => {
      throw new Error(`exploded: ${args.reason}`);
    },
  }) as Tool<never>;
}

/** The events as JSON lines with times zeroed and random ids numbered by first appearance. */
function normalized(events: readonly AnySessionEvent[]): string[] {
  const ids = new Map<string, string>();
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;
  return events.map((event) =>
    JSON.stringify({ ...event, time: 0 }).replace(uuid, (id) => {
      let name = ids.get(id);
      if (name === undefined) {
        name = `id-${ids.size + 1}`;
        ids.set(id, name);
      }
      return name;
    }),
  );
}

async function scriptedRun(): Promise<readonly AnySessionEvent[]> {
  const usage = { inputTokens: 10, outputTokens: 5 };
  const model = new ScriptedProvider({
    responses: [
      {
        reasoning: ['Let me ', 'look.'],
        text: ['Reading ', 'the file.'],
        toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.txt' } }],
        usage,
      },
      {
        toolCalls: [
          { id: 'call_2', name: 'read_file', arguments: { path: 'b.txt' } },
          { id: 'call_3', name: 'no_such_tool', arguments: {} },
          { id: 'call_4', name: 'read_file', arguments: { path: 'c.txt' } },
        ],
        usage,
      },
      { toolCalls: [{ id: 'call_5', name: 'read_file', arguments: { path: 7 } }] },
      { toolCalls: [{ id: 'call_6', name: 'explode', arguments: { reason: 'boom' } }], usage },
      { text: ['All ', 'done.'], usage },
      { text: 'cut sh', finish: 'max-tokens', usage },
      { text: 'partial', error: { message: 'overloaded', code: 'RATE_LIMITED' } },
    ],
  });
  const harness = createHarness({
    providers: [model],
    tools: [readFileTool(), failingTool()],
    onListenerError: () => {
      // No listener in this run throws.
    },
  });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
  agent.followup('Read a.txt');
  await agent.whenIdle();
  agent.followup('Go on');
  await agent.whenIdle();
  agent.followup('Once more');
  await agent.whenIdle();
  const events = agent.session.events;
  await harness.dispose();
  return events;
}

describe('the log of a scripted run', () => {
  it('is exactly the recorded sequence of events and payloads', async () => {
    const expected = JSON.parse(readFileSync(expectedPath, 'utf8')) as string[];
    const actual = normalized(await scriptedRun());
    expect(actual).toEqual(expected);
  });

  it('is the same in a second run in the same process (after the engine optimized the path)', async () => {
    const first = normalized(await scriptedRun());
    for (let run = 0; run < 30; run++) await scriptedRun();
    expect(normalized(await scriptedRun())).toEqual(first);
  });
});
