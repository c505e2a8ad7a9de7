import type { Agent, Harness, HookEventName, Tool } from '../../src/index.ts';
import { createHarness, defineTool } from '../../src/index.ts';
import type { ScriptedTurn } from '../../src/testing/index.ts';
import { ScriptedProvider, eventsOf } from '../../src/testing/index.ts';

/** A harness over a scripted model, plus the agent it made. */
export interface Fixture {
  harness: Harness;
  model: ScriptedProvider;
  agent: Agent;
  /** Live and durable events interleaved in the order they happened (durable ones prefixed `log:`). */
  timeline: string[];
}

const liveEvents: HookEventName[] = [
  'agent/status',
  'agent/inbox/inserted',
  'agent/inbox/discarded',
  'agent/inbox/claimed',
  'agent/error',
];

/** Builds a harness with the given script and tools and one agent, recording a timeline. */
export async function fixture(
  responses: ScriptedTurn[],
  options: { tools?: Tool<never>[]; maxParallelToolCalls?: number; fallback?: ScriptedTurn } = {},
): Promise<Fixture> {
  const model = new ScriptedProvider({
    responses,
    ...(options.fallback !== undefined ? { fallback: options.fallback } : {}),
  });
  const harness = createHarness({
    providers: [model],
    tools: options.tools ?? [],
    ...(options.maxParallelToolCalls !== undefined
      ? { maxParallelToolCalls: options.maxParallelToolCalls }
      : {}),
    onListenerError: () => {
      // Tests that care about contained listener errors register their own reporter.
    },
  });
  const timeline: string[] = [];
  harness.hooks.on('session/event', ({ event }) => {
    if (event.type !== 'assistant/chunk') timeline.push(`log:${event.type}`);
  });
  for (const name of liveEvents) {
    harness.hooks.on(name, ((payload: { status?: string }) => {
      timeline.push(payload.status !== undefined ? `${name}:${payload.status}` : name);
    }) as never);
  }
  const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
  return { harness, model, agent, timeline };
}

/** A read-only tool that echoes its path (parallel-safe). */
export function readFileTool(
  execute: (args: { path: string }, signal: AbortSignal) => Promise<string> | string = (args) =>
    `contents of ${args.path}`,
): Tool<never> {
  return defineTool<{ path: string }>({
    name: 'read_file',
    description: 'Read a file',
    effect: 'read',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
    isConcurrencySafe: () => true,
    execute: (args, context) => execute(args, context.signal),
  }) as Tool<never>;
}

/** The types of a log without chunks. */
export function types(agent: Agent): string[] {
  return agent.session.events.filter((event) => event.type !== 'assistant/chunk').map((event) => event.type);
}

/** The data of every event of a type. */
export function dataOf<T>(agent: Agent, type: string): T[] {
  return eventsOf<T>(agent.session, type);
}

/** Lets pending microtasks and timers run. */
export function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
