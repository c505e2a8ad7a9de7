import type {
  Agent,
  CompactionOptions,
  CompactionWarning,
  Harness,
  LlmAdapter,
  LlmRequest,
  Message,
  Tool,
} from '../../../src/index.ts';
import { compactionPlugin, createHarness, defineTool } from '../../../src/index.ts';
import type { ScriptedResponse } from '../../../src/testing/index.ts';
import { ScriptedProvider, eventTypes } from '../../../src/testing/index.ts';

/** A harness with the compaction plugin over one scripted model, and one agent. */
export interface CompactionFixture {
  harness: Harness;
  model: ScriptedProvider;
  agent: Agent;
  warnings: CompactionWarning[];
}

/** The in-band failure a provider reports when the request does not fit. */
export const overflow = { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'prompt is too long', status: 400 };

/** Builds the fixture; `contextWindow` is what the scripted adapter describes for `test-model`. */
export async function compactionFixture(options: {
  responses?: (ScriptedResponse | ((request: LlmRequest, call: number) => ScriptedResponse))[];
  fallback?: (request: LlmRequest, call: number) => ScriptedResponse;
  contextWindow?: number;
  compaction?: CompactionOptions;
  tools?: Tool<never>[];
  /** Further adapters, e.g. a separate summarization route. */
  providers?: LlmAdapter[];
}): Promise<CompactionFixture> {
  const model = new ScriptedProvider({
    responses: options.responses ?? [],
    ...(options.fallback !== undefined ? { fallback: options.fallback } : {}),
    models: {
      'test-model': options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {},
    },
  });
  const warnings: CompactionWarning[] = [];
  const harness = createHarness({
    providers: [model, ...(options.providers ?? [])],
    tools: options.tools ?? [],
    plugins: [compactionPlugin({ ...options.compaction, onWarning: (warning) => warnings.push(warning) })],
    onListenerError: () => {
      // Contained listener failures are asserted through the log, not the console.
    },
  });
  const agent = await harness.createAgent({ provider: 'scripted', model: 'test-model' });
  return { harness, model, agent, warnings };
}

/** A read-only tool whose result is `size` characters of text. */
export function bigReadTool(size: (path: string) => number): Tool<never> {
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
    execute: (args) => `${args.path}:`.padEnd(size(args.path), 'x'),
  }) as Tool<never>;
}

/** Runs one prompt to completion. */
export async function run(agent: Agent, prompt: string): Promise<void> {
  agent.followup(prompt);
  await agent.whenIdle();
}

/** The log's event types without chunks, from `from` on. */
export function typesFrom(agent: Agent, from = 0): string[] {
  return eventTypes(agent.session.events.slice(from), { chunks: false });
}

/** The text of a message's text blocks. */
export function textOf(message: Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** True when every tool call in the messages has its result later, and every result its earlier call. */
export function pairingIntact(messages: readonly Message[]): boolean {
  const open = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool-call') open.add(block.id);
      if (block.type === 'tool-result') {
        if (!open.has(block.toolCallId)) return false;
        open.delete(block.toolCallId);
      }
    }
  }
  return open.size === 0;
}

/** A long text of about `tokens` heuristic tokens. */
export function filler(label: string, tokens: number): string {
  return `${label} `.padEnd(tokens * 4, '.');
}
