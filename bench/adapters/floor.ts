// The floor: a bare hand-written loop over the same fake model — no framework, no log, no events.
import { macrotask, modelClock, pacedBefore } from '../fake-model.ts';
import type { BenchSubject, BenchTool, FakeReply, FakeScript, FakeToolCall, PromptRun } from '../subject.ts';
import { parallelBound } from '../subject.ts';

type Part = { kind: 'delta'; text: string } | { kind: 'call'; call: FakeToolCall } | { kind: 'end' };
type BareMessage = { role: 'user' | 'assistant' | 'tool'; text: string; calls?: FakeToolCall[] };

async function* play(reply: FakeReply): AsyncGenerator<Part> {
  if (reply.kind === 'tools') {
    const parts = modelClock.measure(() => reply.calls.map((call): Part => ({ kind: 'call', call })));
    yield* parts;
  } else {
    for (let index = 0; index < reply.deltas.length; index++) {
      if (pacedBefore(index)) await macrotask();
      yield { kind: 'delta', text: reply.deltas[index]! };
    }
  }
  yield { kind: 'end' };
}

async function runPool<T>(tasks: readonly (() => Promise<T>)[], bound: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(bound, tasks.length) }, worker));
  return results;
}

async function loop(
  messages: BareMessage[],
  script: FakeScript,
  tool: BenchTool,
  run: Partial<PromptRun>,
  calls: { count: number },
): Promise<void> {
  for (;;) {
    const call = calls.count++;
    modelClock.requests++;
    run.onRequest?.(call, () =>
      messages.filter((message) => message.role === 'tool').map((message) => message.text),
    );
    let text = '';
    const toolCalls: FakeToolCall[] = [];
    for await (const part of play(script(call))) {
      if (part.kind === 'delta') {
        text += part.text;
        run.onTextDelta?.();
      } else if (part.kind === 'call') toolCalls.push(part.call);
    }
    messages.push({ role: 'assistant', text, calls: toolCalls });
    if (toolCalls.length === 0) return;
    const bound = run.parallel === undefined ? Number.POSITIVE_INFINITY : parallelBound[run.parallel];
    const results = await runPool(
      toolCalls.map(
        (toolCall) => () =>
          Promise.resolve(tool.execute(JSON.parse(toolCall.arguments) as { index?: number }, undefined)),
      ),
      bound,
    );
    for (const result of results) messages.push({ role: 'tool', text: result });
  }
}

/** The bare-loop floor subject. */
export const subject: BenchSubject = {
  name: 'floor',
  version: '—',
  parallelModes: ['unbounded', 'pool-10', 'pool-4', 'sequential'],
  async runPrompt(run) {
    await loop([{ role: 'user', text: 'go' }], run.script, run.tool, run, { count: 0 });
  },
  openConversation(script, tool) {
    const messages: BareMessage[] = [];
    const calls = { count: 0 };
    return Promise.resolve({
      async turn(text) {
        messages.push({ role: 'user', text });
        await loop(messages, script, tool, {}, calls);
      },
      close: () => Promise.resolve(),
    });
  },
};
