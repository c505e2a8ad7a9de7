// pi (@mariozechner/pi-agent-core + pi-ai) through its public API: Agent with a custom streamFn.
import { Agent } from '@mariozechner/pi-agent-core';
import type { AgentTool, StreamFn } from '@mariozechner/pi-agent-core';
import { Type, createAssistantMessageEventStream } from '@mariozechner/pi-ai';
import type {
  AssistantMessage,
  AssistantMessageEventStream,
  Context,
  Model,
  ToolCall,
} from '@mariozechner/pi-ai';
import { macrotask, modelClock, pacedBefore } from '../fake-model.ts';
import type { BenchSubject, BenchTool, FakeReply, FakeScript, PromptRun } from '../subject.ts';

const model: Model<string> = {
  id: 'fake',
  name: 'fake',
  api: 'bench',
  provider: 'bench',
  baseUrl: 'http://127.0.0.1:9',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
};

function emptyMessage(): AssistantMessage {
  return {
    role: 'assistant',
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: {
      input: 1,
      output: 1,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 2,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: 'stop',
    timestamp: Date.now(),
  };
}

function playTools(stream: AssistantMessageEventStream, reply: FakeReply & { kind: 'tools' }): void {
  const partial = emptyMessage();
  stream.push({ type: 'start', partial });
  reply.calls.forEach((call, contentIndex) => {
    const toolCall: ToolCall = {
      type: 'toolCall',
      id: call.id,
      name: call.name,
      arguments: JSON.parse(call.arguments) as Record<string, unknown>,
    };
    partial.content.push(toolCall);
    stream.push({ type: 'toolcall_start', contentIndex, partial });
    stream.push({ type: 'toolcall_delta', contentIndex, delta: call.arguments, partial });
    stream.push({ type: 'toolcall_end', contentIndex, toolCall, partial });
  });
  partial.stopReason = 'toolUse';
  stream.push({ type: 'done', reason: 'toolUse', message: partial });
}

async function playText(stream: AssistantMessageEventStream, deltas: readonly string[]): Promise<void> {
  const partial = emptyMessage();
  const block = { type: 'text' as const, text: '' };
  partial.content.push(block);
  stream.push({ type: 'start', partial });
  stream.push({ type: 'text_start', contentIndex: 0, partial });
  for (let index = 0; index < deltas.length; index++) {
    if (pacedBefore(index)) await macrotask();
    const delta = deltas[index]!;
    block.text += delta;
    stream.push({ type: 'text_delta', contentIndex: 0, delta, partial });
  }
  stream.push({ type: 'text_end', contentIndex: 0, content: block.text, partial });
  stream.push({ type: 'done', reason: 'stop', message: partial });
}

function toolResultsOf(context: Context): string[] {
  const texts: string[] = [];
  for (const message of context.messages) {
    if (message.role !== 'toolResult') continue;
    for (const part of message.content) if (part.type === 'text') texts.push(part.text);
  }
  return texts;
}

function fakeStream(script: FakeScript, onRequest?: PromptRun['onRequest']): StreamFn {
  let calls = 0;
  return (_model, context) => {
    const call = calls++;
    modelClock.requests++;
    onRequest?.(call, () => toolResultsOf(context));
    const reply = script(call);
    const stream = createAssistantMessageEventStream();
    if (reply.kind === 'tools') modelClock.measure(() => playTools(stream, reply));
    else void playText(stream, reply.deltas);
    return stream;
  };
}

// Defined once, as a user defines a tool's schema: validators are compiled per schema object.
const parameters = Type.Object({ index: Type.Optional(Type.Integer()) });

function piTool(tool: BenchTool): AgentTool {
  return {
    name: tool.name,
    label: tool.name,
    description: 'A benchmark tool.',
    parameters,
    execute: async (_id, params, signal) => ({
      content: [{ type: 'text', text: await tool.execute(params as { index?: number }, signal) }],
      details: undefined,
    }),
  };
}

function createAgent(script: FakeScript, tool: BenchTool, run?: PromptRun): Agent {
  const agent = new Agent({
    initialState: { systemPrompt: 'You are a benchmark.', model, tools: [piTool(tool)] },
    streamFn: fakeStream(script, run?.onRequest),
    toolExecution: run?.parallel === 'sequential' ? 'sequential' : 'parallel',
  });
  const onTextDelta = run?.onTextDelta;
  if (onTextDelta !== undefined) {
    agent.subscribe((event) => {
      if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') onTextDelta();
    });
  }
  return agent;
}

/** The pi subject. */
export const subject: BenchSubject = {
  name: 'pi',
  version: '0.73.1',
  parallelModes: ['unbounded', 'sequential'],
  async runPrompt(run) {
    const agent = createAgent(run.script, run.tool, run);
    await agent.prompt('go');
    await agent.waitForIdle();
    const last = agent.state.messages[agent.state.messages.length - 1];
    if (last?.role !== 'assistant' || last.stopReason !== 'stop') {
      throw new Error(`the pi run did not complete: ${agent.state.errorMessage ?? 'no final answer'}`);
    }
  },
  openConversation(script, tool) {
    const agent = createAgent(script, tool);
    return Promise.resolve({
      async turn(text) {
        await agent.prompt(text);
      },
      async close() {
        await agent.waitForIdle();
      },
    });
  },
};
