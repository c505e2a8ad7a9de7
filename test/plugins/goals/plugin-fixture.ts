import type { Agent, AgentOptions, Harness, HarnessOptions, Tool } from '../../../src/index.ts';
import { createHarness, defineTool } from '../../../src/index.ts';
import type { ScriptedProviderOptions, ScriptedTurn } from '../../../src/testing/index.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';

/** A harness over a scripted model with the given plugins and tools, and one agent. */
export interface PluginFixture {
  harness: Harness;
  model: ScriptedProvider;
  agent: Agent;
  /** Failures of emit-mode listeners (every test expects none). */
  listenerErrors: unknown[];
}

/** Builds a harness whose `scripted` model plays `responses` (then `fallback`), and one agent on it. */
export async function pluginFixture(
  responses: ScriptedTurn[],
  options: Omit<HarnessOptions, 'providers' | 'defaultModel'> & {
    fallback?: ScriptedTurn;
    models?: ScriptedProviderOptions['models'];
    extraProviders?: HarnessOptions['providers'];
    agent?: AgentOptions;
  } = {},
): Promise<PluginFixture> {
  const { fallback, models, extraProviders, agent: agentOptions, ...harnessOptions } = options;
  const listenerErrors: unknown[] = [];
  const model = new ScriptedProvider({
    responses,
    ...(fallback !== undefined ? { fallback } : {}),
    ...(models !== undefined ? { models } : {}),
  });
  const harness = createHarness({
    ...harnessOptions,
    providers: [model, ...(extraProviders ?? [])],
    onListenerError: (event, error) => listenerErrors.push({ event, error }),
  });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model', ...agentOptions });
  return { harness, model, agent, listenerErrors };
}

/** Event types of a log without chunks and request envelopes (the parts these plugins do not touch). */
export function plotOf(agent: Agent): string[] {
  return agent.session.events
    .filter((event) => !['assistant/chunk', 'request/header', 'request/context'].includes(event.type))
    .map((event) => event.type);
}

export { dataOf } from '../../core/support.ts';

/** A mutating tool that records each call's argument. */
export function writeTool(calls: string[] = []): Tool<never> {
  return defineTool<{ path: string }>({
    name: 'write_file',
    description: 'Write a file',
    effect: 'write',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
    execute: (args) => {
      calls.push(args.path);
      return `wrote ${args.path}`;
    },
  }) as Tool<never>;
}

/** A read-only tool. */
export function readTool(): Tool<never> {
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
    execute: (args) => `contents of ${args.path}`,
  }) as Tool<never>;
}

/** A gate a tool body waits on; `open` lets it through, an abort rejects the wait. */
export function waitGate(signal: AbortSignal, gate: Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(new DOMException('aborted', 'AbortError'));
      return;
    }
    const onAbort = (): void => reject(new DOMException('aborted', 'AbortError'));
    signal.addEventListener('abort', onAbort, { once: true });
    gate.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
    );
  });
}
