// The sessions `bench/web.ts` opens: real runs of the loop over a scripted model, written to the disk
// store of a Rein home, and the loopback Chat Completions server the `rein web` process streams from.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DiskSessionStore, ScriptedProvider, createHarness, defineTool } from '../src/internal.ts';
import type { ScriptedResponse } from '../src/internal.ts';

/** The provider and model the generated sessions record, served by the loopback model server. */
export const benchRoute = { provider: 'bench', model: 'bench-model' } as const;

/** What one generated session holds. */
export interface GeneratedSession {
  readonly id: string;
  readonly turns: number;
  readonly steps: number;
  readonly events: number;
}

// A tool result about as long as a short file listing or a grep answer (about 1 KB).
const resultText = Array.from(
  { length: 24 },
  (_, line) => `src/module-${line}/file-${line}.ts:${line + 10}: export function handler${line}() {}`,
).join('\n');

const answerText = [
  'I read the files you asked about. Here is what they do:',
  '',
  '- **module 1** exports the handlers;',
  '- `module 2` wires them into the router.',
  '',
  '```ts',
  'export function handler() {',
  '  return 42;',
  '}',
  '```',
].join('\n');

/**
 * Runs `turns` turns of `stepsPerTurn` tool steps (one `read_file` call each, a ~1 KB result) and a
 * closing markdown answer through the real loop into the disk store under `home`.
 */
export async function generateSession(
  home: string,
  id: string,
  turns: number,
  stepsPerTurn: number,
): Promise<GeneratedSession> {
  const store = new DiskSessionStore({ root: join(home, 'sessions'), durability: 'process-crash' });
  let call = 0;
  const model = new ScriptedProvider({
    provider: benchRoute.provider,
    recordRequests: false,
    models: { [benchRoute.model]: { label: 'Bench model', contextWindow: 1_000_000 } },
    fallback: (): ScriptedResponse => {
      const index = call++;
      if (index % (stepsPerTurn + 1) === stepsPerTurn)
        return {
          text: [answerText.slice(0, 40), answerText.slice(40)],
          usage: { inputTokens: 900, outputTokens: 60 },
        };
      return {
        toolCalls: [{ id: `call_${index}`, name: 'read_file', arguments: { path: `src/file-${index}.ts` } }],
        usage: { inputTokens: 800, outputTokens: 20 },
      };
    },
  });
  const readFile = defineTool<{ path: string }>({
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
    execute: () => resultText,
  });
  const harness = createHarness({ providers: [model], tools: [readFile as never], store });
  const agent = await harness.createAgent({ id, ...benchRoute });
  for (let turn = 0; turn < turns; turn++) {
    agent.followup(`Look at part ${turn + 1} of the project and tell me what it does.`);
    await agent.whenIdle();
  }
  const events = agent.session.events.length;
  await harness.dispose();
  return { id, turns, steps: turns * stepsPerTurn, events };
}

/** Writes the home's config: the loopback model server as the custom provider `bench`, and the default model. */
export function writeBenchConfig(home: string, modelUrl: string): void {
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      defaultModel: `${benchRoute.provider}/${benchRoute.model}`,
      providers: { [benchRoute.provider]: { baseUrl: modelUrl, models: [benchRoute.model] } },
      models: { [`${benchRoute.provider}/${benchRoute.model}`]: { contextWindow: 1_000_000 } },
    }),
  );
}

/** The words of the streamed answer: paragraphs of lines, now and then a fenced code block. */
export function streamedDeltas(count: number): string[] {
  const deltas: string[] = [];
  for (let index = 0; index < count; index++) {
    let delta = `word${index % 97} `;
    if (index % 12 === 11) delta += '\n';
    if (index % 72 === 71) delta += '\n';
    if (index % 1_000 === 500) delta += '\n```ts\nconst value = compute(input);\n```\n\n';
    deltas.push(delta);
  }
  return deltas;
}

/** A loopback OpenAI-compatible server (the vendor's streaming wire format) whose every answer streams `deltas`. */
export interface StreamingModelServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the model server: Chat Completions SSE, `perTick` deltas per macrotask so the stream is paced. */
export async function startStreamingModel(
  deltas: readonly string[],
  perTick: number,
): Promise<StreamingModelServer> {
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const frame = (body: unknown): string => `data: ${JSON.stringify(body)}\n\n`;
      const base = {
        id: 'chatcmpl-bench',
        object: 'chat.completion.chunk',
        created: 0,
        model: benchRoute.model,
      };
      response.write(frame({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }));
      let index = 0;
      const tick = (): void => {
        let batch = '';
        const end = Math.min(deltas.length, index + perTick);
        for (; index < end; index++)
          batch += frame({ ...base, choices: [{ index: 0, delta: { content: deltas[index] } }] });
        if (batch !== '') response.write(batch);
        if (index < deltas.length) {
          setTimeout(tick, 1);
          return;
        }
        response.write(frame({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
        response.write(
          frame({
            ...base,
            choices: [],
            usage: {
              prompt_tokens: 1000,
              completion_tokens: deltas.length,
              total_tokens: 1000 + deltas.length,
            },
          }),
        );
        response.end('data: [DONE]\n\n');
      };
      tick();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
