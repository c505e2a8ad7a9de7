import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmRequest, Tool } from '../../src/internal.ts';
import {
  AnthropicProvider,
  OpenAICompatibleProvider,
  buildChatCompletionsBody,
  buildMessagesBody,
  createHarness,
  defineTool,
  retryPlugin,
} from '../../src/internal.ts';
import { ScriptedProvider, eventsOf } from '../../src/testing/index.ts';
import { startFakeAnthropicServer } from '../support/fake-anthropic-server.ts';
import type { FakeServer } from '../support/fake-openai-server.ts';
import { startFakeOpenAIServer } from '../support/fake-openai-server.ts';

// The vendors' rules for a follow-up request (§0.13): what both OpenAI and Anthropic reject otherwise.
const validName = /^[a-zA-Z0-9_-]{1,64}$/;

function isObjectValue(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Problems of a Chat Completions body: bad names or arguments, unanswered, duplicated or stray results. */
function chatCompletionsProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const messages = body.messages as Record<string, unknown>[];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'tool') {
      problems.push(`message ${index}: a tool result that answers no call just before it`);
      continue;
    }
    const calls = (message.tool_calls ?? []) as {
      id: string;
      function: { name: string; arguments: string };
    }[];
    if (message.role !== 'assistant' || calls.length === 0) continue;
    const ids = calls.map((call) => call.id);
    if (new Set(ids).size !== ids.length || ids.some((id) => id === '')) {
      problems.push(`message ${index}: call ids are empty or repeated: ${JSON.stringify(ids)}`);
    }
    for (const call of calls) {
      if (!validName.test(call.function.name))
        problems.push(`call ${call.id}: bad name '${call.function.name}'`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(call.function.arguments);
      } catch {
        parsed = undefined;
      }
      if (!isObjectValue(parsed)) problems.push(`call ${call.id}: arguments are not a JSON object`);
    }
    for (const id of ids) {
      const answer = messages[++index];
      if (answer?.role !== 'tool' || answer.tool_call_id !== id) {
        problems.push(`call ${id}: not answered in order by exactly one tool message`);
        index--;
        break;
      }
    }
  }
  return problems;
}

/** Problems of a Messages API body, by the same rules. */
function messagesProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const messages = body.messages as { role: string; content: Record<string, unknown>[] }[];
  let expected: string[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    const results = message.content.filter((block) => block.type === 'tool_result');
    if (message.role === 'user') {
      const answered = results.map((block) => block.tool_use_id);
      if (JSON.stringify(answered) !== JSON.stringify(expected)) {
        problems.push(
          `message ${index}: results ${JSON.stringify(answered)} for calls ${JSON.stringify(expected)}`,
        );
      }
      expected = [];
      continue;
    }
    if (expected.length > 0) problems.push(`message ${index}: calls ${JSON.stringify(expected)} unanswered`);
    const calls = message.content.filter((block) => block.type === 'tool_use');
    expected = calls.map((call) => call.id as string);
    if (new Set(expected).size !== expected.length) problems.push(`message ${index}: repeated call ids`);
    for (const call of calls) {
      if (!validName.test(call.name as string)) problems.push(`call ${String(call.id)}: bad name`);
      if (!isObjectValue(call.input)) problems.push(`call ${String(call.id)}: input is not an object`);
    }
  }
  if (expected.length > 0) problems.push(`calls ${JSON.stringify(expected)} unanswered at the end`);
  return problems;
}

function bothVendors(request: LlmRequest): string[] {
  return [
    ...chatCompletionsProblems(
      buildChatCompletionsBody(request, {
        provider: request.provider,
        reasoningReplay: true,
        maxTokensField: 'max_tokens',
        streamUsage: true,
      }),
    ),
    ...messagesProblems(
      buildMessagesBody(request, {
        provider: request.provider,
        maxTokens: 1024,
        thinking: undefined,
        sampling: true,
        promptCaching: false,
      }),
    ),
  ];
}

const echo = defineTool<{ text: string }>({
  name: 'echo',
  description: 'echoes',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  isConcurrencySafe: () => true,
  execute: ({ text }) => text,
}) as Tool<never>;

const raw = defineTool({
  name: 'raw',
  description: 'takes anything',
  execute: (args) => `got ${typeof args}`,
}) as Tool<never>;

const malformedCall = fc.record({
  id: fc.oneof(fc.constantFrom('', 'c1', 'c2', 'dup'), fc.string({ maxLength: 6 })),
  name: fc.oneof(
    fc.constantFrom('', 'echo', 'raw', ' ', 'read.file', 'x'.repeat(80)),
    fc.string({ maxLength: 12 }),
  ),
  arguments: fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.json({ maxDepth: 2 }),
    fc.constantFrom('', '{"text":', '[1,2]', '"just a string"', 'null', '{"text":"hi"}', '{}'),
  ),
});

describe('the next request is always provider-valid (§0.13)', () => {
  it('over random malformed tool calls, every follow-up passes the OpenAI and Anthropic request rules; the log keeps the raw calls', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(malformedCall, { minLength: 1, maxLength: 4 }), async (calls) => {
        const model = new ScriptedProvider({ responses: [{ toolCalls: calls }, { text: 'done' }] });
        const harness = createHarness({ providers: [model], tools: [echo, raw] });
        const agent = await harness.createAgent({ provider: 'scripted', model: 'm' });
        agent.followup('go');
        await agent.whenIdle();
        const logged = eventsOf<{ name: string; arguments: string }>(agent.session, 'tool/call');
        expect(logged.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(
          calls.map((call) => ({ name: call.name, arguments: call.arguments })),
        );
        expect(eventsOf(agent.session, 'tool/result')).toHaveLength(calls.length);
        expect(model.requests).toHaveLength(2);
        expect(bothVendors(model.requests[1]!)).toEqual([]);
        await harness.dispose();
      }),
      { numRuns: 150 },
    );
  });

  describe('over mutated Chat Completions streams served by a loopback server', () => {
    let server: FakeServer;
    let current = '';
    beforeAll(async () => {
      // The turn's first request (and its retry) gets the mutated reply; one that carries tool results, an answer.
      server = await startFakeOpenAIServer((_request, body) =>
        (body as { messages: { role: string }[] }).messages.some((message) => message.role === 'tool')
          ? { text: 'ok' }
          : { raw: current },
      );
    });
    afterAll(async () => {
      await server.close();
    });

    const frame = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const baseFrames = (): string[] => [
      frame({ role: 'assistant', content: '' }),
      frame({
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'echo', arguments: '' } }],
      }),
      frame({ tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] }),
      frame({ tool_calls: [{ index: 0, function: { arguments: '"hi"}' } }] }),
      frame({
        tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'raw', arguments: '' } }],
      }),
      frame({ tool_calls: [{ index: 1, function: { arguments: '{"a":1}' } }] }),
      frame({}, 'tool_calls'),
      'data: [DONE]\n\n',
    ];

    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), keep: fc.nat() }),
      fc.record({
        kind: fc.constant('delta' as const),
        at: fc.nat(),
        field: fc.constantFrom('id', 'name', 'arguments', 'index'),
        value: fc.oneof(
          fc.string({ maxLength: 8 }),
          fc.constantFrom('', '{', 'call_a'),
          fc.integer({ min: 0, max: 2 }),
        ),
      }),
    );

    type Mutation = {
      kind: string;
      at: number;
      with?: number;
      keep?: number;
      field?: string;
      value?: unknown;
    };

    function mutate(frames: string[], mutations: readonly Mutation[]): string {
      const out = [...frames];
      for (const step of mutations) {
        if (out.length === 0) break;
        const at = step.at % out.length;
        if (step.kind === 'drop') out.splice(at, 1);
        else if (step.kind === 'duplicate') out.splice(at, 0, out[at]!);
        else if (step.kind === 'swap') {
          const other = step.with! % out.length;
          [out[at], out[other]] = [out[other]!, out[at]!];
        } else if (step.kind === 'cut') {
          const text = out[at]!;
          out[at] = `${text.slice(0, step.keep! % text.length)}\n\n`;
        } else {
          const match = /^data: (.*)\n\n$/s.exec(out[at]!);
          if (match === null || match[1] === '[DONE]') continue;
          let payload: { choices: { delta: { tool_calls?: Record<string, unknown>[] } }[] };
          try {
            payload = JSON.parse(match[1]!) as typeof payload;
          } catch {
            // An earlier mutation already cut this frame: nothing left to edit.
            continue;
          }
          const call = payload.choices[0]?.delta.tool_calls?.[0];
          if (call === undefined) continue;
          if (step.field === 'index' || step.field === 'id') call[step.field] = step.value;
          else call.function = { ...(call.function as object), [step.field!]: step.value };
          out[at] = `data: ${JSON.stringify(payload)}\n\n`;
        }
      }
      return out.join('');
    }

    it('every request after a mutated reply passes the vendor rules', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
          current = mutate(baseFrames(), mutations);
          const first = server.requests.length;
          const provider = new OpenAICompatibleProvider({
            provider: 'deepseek',
            baseUrl: server.url,
            apiKey: 'k',
            retryPolicy: {
              mode: 'normal',
              maxRetries: 1,
              retryableCodes: ['INVALID_RESPONSE', 'TRANSPORT', 'EMPTY_RESPONSE', 'SERVER'],
              initialDelayMs: 0,
              maxDelayMs: 0,
              jitterRatio: 0,
            },
          });
          const harness = createHarness({
            providers: [provider],
            tools: [echo, raw],
            plugins: [retryPlugin()],
          });
          const agent = await harness.createAgent({ provider: 'deepseek', model: 'deepseek-chat' });
          agent.followup('go');
          await agent.whenIdle();
          // The retry plugin makes a failed reply produce a follow-up request too; every one is checked.
          const sent = server.requests.slice(first);
          expect(sent.length).toBeGreaterThanOrEqual(1);
          for (const request of sent) {
            expect(chatCompletionsProblems(request.body as Record<string, unknown>)).toEqual([]);
          }
          expect(eventsOf(agent.session, 'tool/result')).toHaveLength(
            eventsOf(agent.session, 'tool/call').length,
          );
          await harness.dispose();
        }),
        { numRuns: 60 },
      );
    });
  });
  describe('over mutated Messages API streams served by a loopback server', () => {
    let server: FakeServer;
    let current = '';
    beforeAll(async () => {
      // The turn's first request (and its retry) gets the mutated reply; one that carries tool results, an answer.
      server = await startFakeAnthropicServer((_request, body) =>
        (body as { messages: { content: { type: string }[] }[] }).messages.some((message) =>
          message.content.some((block) => block.type === 'tool_result'),
        )
          ? { text: 'ok' }
          : { raw: current },
      );
    });
    afterAll(async () => {
      await server.close();
    });

    const event = (type: string, data: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const baseFrames = (): string[] => [
      event('message_start', {
        message: { id: 'm', role: 'assistant', content: [], usage: { input_tokens: 5 } },
      }),
      event('content_block_start', {
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_a', name: 'echo', input: {} },
      }),
      event('content_block_delta', {
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"text":' },
      }),
      event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '"hi"}' } }),
      event('content_block_stop', { index: 0 }),
      event('content_block_start', {
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_b', name: 'raw', input: {} },
      }),
      event('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '[1,2' } }),
      event('content_block_stop', { index: 1 }),
      event('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
      event('message_stop', {}),
    ];

    const mutation = fc.record({
      kind: fc.constantFrom('drop', 'duplicate', 'swap', 'cut', 'id', 'name', 'json'),
      at: fc.nat(),
      with: fc.nat(),
      value: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('', '{', 'toolu_a', '}}')),
    });

    function mutate(
      frames: string[],
      mutations: readonly { kind: string; at: number; with: number; value: string }[],
    ): string {
      const out = [...frames];
      for (const step of mutations) {
        if (out.length === 0) break;
        const at = step.at % out.length;
        if (step.kind === 'drop') out.splice(at, 1);
        else if (step.kind === 'duplicate') out.splice(at, 0, out[at]!);
        else if (step.kind === 'swap') {
          const other = step.with % out.length;
          [out[at], out[other]] = [out[other]!, out[at]!];
        } else if (step.kind === 'cut') {
          const text = out[at]!;
          out[at] = `${text.slice(0, step.with % text.length)}\n\n`;
        } else {
          const match = /^event: (\S+)\ndata: (.*)\n\n$/s.exec(out[at]!);
          if (match === null) continue;
          let payload: { content_block?: Record<string, unknown>; delta?: Record<string, unknown> };
          try {
            payload = JSON.parse(match[2]!) as typeof payload;
          } catch {
            // An earlier mutation already cut this frame: nothing left to edit.
            continue;
          }
          if (step.kind === 'json' && payload.delta?.type === 'input_json_delta')
            payload.delta.partial_json = step.value;
          else if (step.kind !== 'json' && payload.content_block?.type === 'tool_use')
            payload.content_block[step.kind] = step.value;
          else continue;
          out[at] = `event: ${match[1]!}\ndata: ${JSON.stringify(payload)}\n\n`;
        }
      }
      return out.join('');
    }

    it('every request after a mutated reply passes the vendor rules', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
          current = mutate(baseFrames(), mutations);
          const first = server.requests.length;
          const provider = new AnthropicProvider({
            baseUrl: server.url,
            apiKey: 'k',
            promptCaching: false,
            retryPolicy: {
              mode: 'normal',
              maxRetries: 1,
              retryableCodes: ['INVALID_RESPONSE', 'TRANSPORT', 'EMPTY_RESPONSE', 'SERVER'],
              initialDelayMs: 0,
              maxDelayMs: 0,
              jitterRatio: 0,
            },
          });
          const harness = createHarness({
            providers: [provider],
            tools: [echo, raw],
            plugins: [retryPlugin()],
          });
          const agent = await harness.createAgent({ provider: 'anthropic', model: 'claude-sonnet-4-6' });
          agent.followup('go');
          await agent.whenIdle();
          const sent = server.requests.slice(first);
          expect(sent.length).toBeGreaterThanOrEqual(1);
          for (const request of sent)
            expect(messagesProblems(request.body as Record<string, unknown>)).toEqual([]);
          expect(eventsOf(agent.session, 'tool/result')).toHaveLength(
            eventsOf(agent.session, 'tool/call').length,
          );
          await harness.dispose();
        }),
        { numRuns: 60 },
      );
    });
  });
});
