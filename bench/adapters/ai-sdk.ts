// The Vercel AI SDK (`ai` 6) through its public API: streamText with tools and a custom LanguageModelV3.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { jsonSchema, streamText, tool as defineAiTool } from 'ai';
import type { ModelMessage, ToolSet } from 'ai';
import { macrotask, modelClock, paceDeltas } from '../fake-model.ts';
import type { BenchSubject, BenchTool, FakeReply, FakeScript, PromptRun } from '../subject.ts';

const usage: LanguageModelV3Usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function toolParts(reply: FakeReply & { kind: 'tools' }): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (const call of reply.calls) {
    parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name });
    parts.push({ type: 'tool-input-delta', id: call.id, delta: call.arguments });
    parts.push({ type: 'tool-input-end', id: call.id });
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
  }
  parts.push({ type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } });
  return parts;
}

function toolStream(reply: FakeReply & { kind: 'tools' }): ReadableStream<LanguageModelV3StreamPart> {
  const parts = toolParts(reply);
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** Text deltas pulled in paced batches: a macrotask before every batch of 64 after the first. */
function textStream(deltas: readonly string[]): ReadableStream<LanguageModelV3StreamPart> {
  let next = 0;
  return new ReadableStream({
    async pull(controller) {
      if (next === 0) {
        controller.enqueue({ type: 'stream-start', warnings: [] });
        controller.enqueue({ type: 'text-start', id: 't0' });
      } else {
        await macrotask();
      }
      const end = Math.min(deltas.length, next + paceDeltas);
      for (; next < end; next++) controller.enqueue({ type: 'text-delta', id: 't0', delta: deltas[next]! });
      if (next >= deltas.length) {
        controller.enqueue({ type: 'text-end', id: 't0' });
        controller.enqueue({ type: 'finish', usage, finishReason: { unified: 'stop', raw: 'stop' } });
        controller.close();
      }
    },
  });
}

function toolResultsOf(prompt: LanguageModelV3Prompt): string[] {
  const texts: string[] = [];
  for (const message of prompt) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const output = part.output;
      if (output.type === 'text') texts.push(output.value);
      else if (output.type === 'json') texts.push(String(output.value));
    }
  }
  return texts;
}

function fakeModel(script: FakeScript, onRequest?: PromptRun['onRequest']): LanguageModelV3 {
  let calls = 0;
  const take = (options: LanguageModelV3CallOptions): FakeReply => {
    const call = calls++;
    modelClock.requests++;
    onRequest?.(call, () => toolResultsOf(options.prompt));
    return script(call);
  };
  return {
    specificationVersion: 'v3',
    provider: 'bench',
    modelId: 'fake',
    supportedUrls: {},
    doGenerate(options) {
      const reply = take(options);
      const content: LanguageModelV3Content[] =
        reply.kind === 'text'
          ? [{ type: 'text', text: reply.deltas.join('') }]
          : reply.calls.map((call) => ({
              type: 'tool-call',
              toolCallId: call.id,
              toolName: call.name,
              input: call.arguments,
            }));
      const finishReason =
        reply.kind === 'text'
          ? { unified: 'stop' as const, raw: 'stop' }
          : { unified: 'tool-calls' as const, raw: 'tool_calls' };
      return Promise.resolve({ content, finishReason, usage, warnings: [] });
    },
    doStream(options) {
      const reply = take(options);
      const stream =
        reply.kind === 'text' ? textStream(reply.deltas) : modelClock.measure(() => toolStream(reply));
      return Promise.resolve({ stream });
    },
  };
}

// Defined once, as a user defines a tool's schema: validators are compiled per schema object.
const inputSchema = jsonSchema<{ index?: number }>({
  type: 'object',
  properties: { index: { type: 'integer' } },
  additionalProperties: false,
});

function toolSet(tool: BenchTool): ToolSet {
  return {
    [tool.name]: defineAiTool({
      description: 'A benchmark tool.',
      inputSchema,
      execute: (args, { abortSignal }) => tool.execute(args, abortSignal),
    }),
  };
}

async function drain(
  result: ReturnType<typeof streamText>,
  onTextDelta: (() => void) | undefined,
): Promise<void> {
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') onTextDelta?.();
    else if (part.type === 'error')
      throw part.error instanceof Error ? part.error : new Error(String(part.error));
  }
}

/** The Vercel AI SDK subject. */
export const subject: BenchSubject = {
  name: 'ai-sdk',
  version: '6.0.326',
  parallelModes: ['unbounded'],
  async runPrompt(run) {
    const result = streamText({
      model: fakeModel(run.script, run.onRequest),
      system: 'You are a benchmark.',
      prompt: 'go',
      tools: toolSet(run.tool),
      // Keep stepping while the model calls tools (the default stops after one step).
      stopWhen: () => false,
    });
    await drain(result, run.onTextDelta);
    if ((await result.finishReason) !== 'stop') throw new Error('the AI SDK run did not complete');
  },
  openConversation(script, tool) {
    const model = fakeModel(script);
    const tools = toolSet(tool);
    const messages: ModelMessage[] = [];
    return Promise.resolve({
      async turn(text) {
        messages.push({ role: 'user', content: text });
        const result = streamText({
          model,
          system: 'You are a benchmark.',
          messages,
          tools,
          stopWhen: () => false,
        });
        await drain(result, undefined);
        messages.push(...(await result.response).messages);
      },
      close: () => Promise.resolve(),
    });
  },
};
