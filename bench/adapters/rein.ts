// Rein through its public SDK: createHarness, a fake LlmAdapter, one tool, followup + whenIdle. The SDK
// is the built package unless REIN_BENCH_SOURCE=src (bench/rein-sdk.ts).
import type { LlmAdapter, LlmRequest, StreamChunk, Tool } from '../../src/index.ts';
import type { ScriptedResponse } from '../../src/testing/index.ts';
import { rein, reinSource, reinTesting } from '../rein-sdk.ts';
import { macrotask, modelClock, pacedBefore } from '../fake-model.ts';
import type { BenchSubject, BenchTool, FakeReply, FakeScript, ParallelMode, PromptRun } from '../subject.ts';
import { parallelBound } from '../subject.ts';

/** Options of a Rein subject: where sessions live, and which fake model plays the script. */
export interface ReinSubjectOptions {
  name?: string;
  /** Plays the script with Rein's own ScriptedProvider (unpaced) instead of the shared paced fake model. */
  scripted?: boolean;
}

const providerName = 'bench';

/** The fake model as a Rein adapter: renders each reply as stream chunks, paced like every peer's. */
class FakeReinModel implements LlmAdapter {
  readonly provider = providerName;
  readonly #script: FakeScript;
  readonly #onRequest: PromptRun['onRequest'];
  #calls = 0;

  constructor(script: FakeScript, onRequest?: PromptRun['onRequest']) {
    this.#script = script;
    this.#onRequest = onRequest;
  }

  stream(request: LlmRequest): AsyncIterable<StreamChunk> {
    const call = this.#calls++;
    modelClock.requests++;
    this.#onRequest?.(call, () => toolResultsOf(request));
    const reply = this.#script(call);
    return reply.kind === 'text' ? streamText(reply.deltas) : modelClock.measure(() => toolChunks(reply));
  }
}

function toolChunks(reply: FakeReply & { kind: 'tools' }): AsyncIterable<StreamChunk> {
  const chunks: StreamChunk[] = [];
  reply.calls.forEach((call, index) => {
    chunks.push({ type: 'block-start', index, blockType: 'tool-call' });
    chunks.push({
      type: 'tool-call-delta',
      index,
      id: call.id,
      name: call.name,
      argumentsDelta: call.arguments,
    });
    chunks.push({
      type: 'block-end',
      index,
      block: { type: 'tool-call', id: call.id, name: call.name, arguments: call.arguments },
    });
  });
  chunks.push({ type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } });
  chunks.push({ type: 'finish', reason: { kind: 'tool-calls' } });
  return fromArray(chunks);
}

async function* fromArray(chunks: readonly StreamChunk[]): AsyncGenerator<StreamChunk> {
  yield* chunks;
}

async function* streamText(deltas: readonly string[]): AsyncGenerator<StreamChunk> {
  yield { type: 'block-start', index: 0, blockType: 'text' };
  for (let index = 0; index < deltas.length; index++) {
    if (pacedBefore(index)) await macrotask();
    yield { type: 'text-delta', index: 0, text: deltas[index]! };
  }
  yield { type: 'block-end', index: 0, block: { type: 'text', text: deltas.join('') } };
  yield { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } };
  yield { type: 'finish', reason: { kind: 'stop' } };
}

function toolResultsOf(request: LlmRequest): string[] {
  const texts: string[] = [];
  for (const message of request.messages) {
    for (const block of message.content) {
      if (block.type !== 'tool-result') continue;
      for (const part of block.content) if (part.type === 'text') texts.push(part.text);
    }
  }
  return texts;
}

function scriptedResponse(reply: FakeReply): ScriptedResponse {
  return reply.kind === 'text'
    ? { text: reply.deltas, usage: { inputTokens: 1, outputTokens: 1 } }
    : {
        toolCalls: reply.calls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
        usage: { inputTokens: 1, outputTokens: 1 },
      };
}

// Defined once, as a user defines a tool's schema: validators are compiled per schema object.
const parameters = {
  type: 'object',
  properties: { index: { type: 'integer' } },
  additionalProperties: false,
};

function reinTool(tool: BenchTool): Tool<never> {
  return rein.defineTool<{ index?: number }>({
    name: tool.name,
    description: 'A benchmark tool.',
    parameters,
    isConcurrencySafe: () => true,
    execute: (args, context) => tool.execute(args, context.signal),
  }) as Tool<never>;
}

function boundOf(mode: ParallelMode | undefined, calls: number): number | undefined {
  if (mode === undefined) return undefined;
  const bound = parallelBound[mode];
  // Rein's pool bound is a positive integer: "unbounded" is a bound at least as large as the 16 calls.
  return Number.isFinite(bound) ? bound : calls;
}

/** Creates the Rein subject. */
export function createReinSubject(options: ReinSubjectOptions = {}): BenchSubject {
  const model = (script: FakeScript, onRequest?: PromptRun['onRequest']): LlmAdapter =>
    options.scripted === true
      ? new reinTesting.ScriptedProvider({
          provider: providerName,
          // A benchmark runs thousands of steps: recorded requests would keep every history snapshot.
          recordRequests: false,
          fallback: (_request, call) => scriptedResponse(script(call)),
        })
      : new FakeReinModel(script, onRequest);
  const open = async (script: FakeScript, tool: BenchTool, run?: PromptRun) => {
    const bound = boundOf(run?.parallel, 16);
    const harness = rein.createHarness({
      providers: [model(script, run?.onRequest)],
      tools: [reinTool(tool)],
      ...(bound !== undefined ? { maxParallelToolCalls: bound } : {}),
    });
    const agent = await harness.createAgent({ provider: providerName, model: 'fake' });
    const onTextDelta = run?.onTextDelta;
    if (onTextDelta !== undefined) {
      harness.hooks.on(
        'session/event',
        ({ event }) => {
          if (
            event.type === 'assistant/chunk' &&
            (event.data as { chunk: StreamChunk }).chunk.type === 'text-delta'
          )
            onTextDelta();
        },
        { scope: agent.id },
      );
    }
    return { harness, agent };
  };
  return {
    name: options.name ?? 'rein',
    version: `0.1.0 (${reinSource})`,
    parallelModes: ['unbounded', 'pool-10', 'pool-4', 'sequential'],
    async runPrompt(run) {
      const { harness, agent } = await open(run.script, run.tool, run);
      agent.followup('go');
      await agent.whenIdle();
      const last = agent.session.log.at(-1);
      if (
        last?.type !== 'turn/end' ||
        (last.data as { reason: { kind: string } }).reason.kind !== 'completed'
      ) {
        throw new Error(`the Rein turn did not complete: ${JSON.stringify(last)}`);
      }
      await harness.dispose();
    },
    async openConversation(script, tool) {
      const { harness, agent } = await open(script, tool);
      return {
        async turn(text) {
          agent.followup(text);
          await agent.whenIdle();
        },
        close: () => harness.dispose(),
      };
    },
  };
}

/** The default Rein subject (in-memory store, the shared paced fake model). */
export const subject: BenchSubject = createReinSubject();
