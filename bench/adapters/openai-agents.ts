// The OpenAI Agents SDK (@openai/agents 0.14) through its public API: Agent + run(stream) with a custom Model.
import { Agent, Usage, run, setTracingDisabled, tool as defineAgentTool } from '@openai/agents';
import type { AgentInputItem, AgentOutputItem, Model, ModelRequest, ModelResponse } from '@openai/agents';
import type { JsonObjectSchemaNonStrict, StreamEvent } from '@openai/agents-core/types';
import { macrotask, modelClock, pacedBefore } from '../fake-model.ts';
import type { BenchSubject, BenchTool, FakeReply, FakeScript, PromptRun } from '../subject.ts';

// Tracing would export spans to OpenAI's servers; the benchmark never touches the network.
setTracingDisabled(true);

const plainUsage = { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 };

function outputOf(reply: FakeReply, call: number): AgentOutputItem[] {
  if (reply.kind === 'tools') {
    return reply.calls.map((toolCall) => ({
      type: 'function_call',
      id: `fc_${toolCall.id}`,
      callId: toolCall.id,
      name: toolCall.name,
      arguments: toolCall.arguments,
      status: 'completed',
    }));
  }
  return [
    {
      type: 'message',
      id: `msg_${call}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: reply.deltas.join('') }],
    },
  ];
}

function toolResultsOf(request: ModelRequest): string[] {
  const texts: string[] = [];
  if (typeof request.input === 'string') return texts;
  for (const item of request.input) {
    if (item.type !== 'function_call_result') continue;
    const output = item.output;
    if (typeof output === 'string') texts.push(output);
    else if (!Array.isArray(output) && output.type === 'text') texts.push(output.text);
  }
  return texts;
}

class FakeAgentsModel implements Model {
  readonly #script: FakeScript;
  readonly #onRequest: PromptRun['onRequest'];
  #calls = 0;

  constructor(script: FakeScript, onRequest?: PromptRun['onRequest']) {
    this.#script = script;
    this.#onRequest = onRequest;
  }

  #take(request: ModelRequest): { reply: FakeReply; call: number } {
    const call = this.#calls++;
    modelClock.requests++;
    this.#onRequest?.(call, () => toolResultsOf(request));
    return { reply: this.#script(call), call };
  }

  getResponse(request: ModelRequest): Promise<ModelResponse> {
    const { reply, call } = this.#take(request);
    return Promise.resolve({
      usage: new Usage(plainUsage),
      output: outputOf(reply, call),
      responseId: `resp_${call}`,
    });
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const { reply, call } = this.#take(request);
    yield { type: 'response_started' };
    if (reply.kind === 'text') {
      for (let index = 0; index < reply.deltas.length; index++) {
        if (pacedBefore(index)) await macrotask();
        yield { type: 'output_text_delta', delta: reply.deltas[index]! };
      }
    }
    const output = modelClock.measure(() => outputOf(reply, call));
    // The wire event's output schema is the protocol's item union; our items are exactly those items.
    const done = { type: 'response_done', response: { id: `resp_${call}`, usage: plainUsage, output } };
    yield done as StreamEvent;
  }
}

// Defined once, as a user defines a tool's schema. A non-strict JSON schema: `index` is optional.
const parameters: JsonObjectSchemaNonStrict<{ index: { type: 'integer' } }> = {
  type: 'object',
  properties: { index: { type: 'integer' } },
  required: [],
  additionalProperties: true,
};

function agentTool(tool: BenchTool) {
  return defineAgentTool({
    name: tool.name,
    description: 'A benchmark tool.',
    parameters,
    strict: false,
    execute: (input: unknown) => tool.execute(input as { index?: number }, undefined),
  });
}

function createAgent(script: FakeScript, tool: BenchTool, onRequest?: PromptRun['onRequest']): Agent {
  return new Agent({
    name: 'bench',
    instructions: 'You are a benchmark.',
    model: new FakeAgentsModel(script, onRequest),
    tools: [agentTool(tool)],
  });
}

async function runStreamed(
  agent: Agent,
  input: string | AgentInputItem[],
  onTextDelta: (() => void) | undefined,
): Promise<AgentInputItem[]> {
  const result = await run(agent, input, { stream: true, maxTurns: 1_000_000 });
  for await (const event of result) {
    if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') onTextDelta?.();
  }
  await result.completed;
  if (result.error !== null && result.error !== undefined) throw result.error;
  if (typeof result.finalOutput !== 'string') throw new Error('the OpenAI Agents run did not complete');
  return result.history;
}

/** The OpenAI Agents SDK subject. */
export const subject: BenchSubject = {
  name: 'openai-agents',
  version: '0.14.3',
  parallelModes: ['unbounded'],
  async runPrompt(runOptions) {
    const agent = createAgent(runOptions.script, runOptions.tool, runOptions.onRequest);
    await runStreamed(agent, 'go', runOptions.onTextDelta);
  },
  openConversation(script, tool) {
    const agent = createAgent(script, tool);
    let history: AgentInputItem[] = [];
    return Promise.resolve({
      async turn(text) {
        history = await runStreamed(agent, [...history, { role: 'user', content: text }], undefined);
      },
      close: () => Promise.resolve(),
    });
  },
};
