import { randomUUID } from 'node:crypto';
import type {
  ContentBlock,
  LlmAdapter,
  LlmRequest,
  Message,
  ModelInfo,
  StreamChunk,
  TokenUsage,
  ToolCallBlock,
  ToolSchema,
} from '../../llm/index.ts';
import { LlmError, decodedBytes, formatBytes } from '../../llm/index.ts';
import { outlineDocument, renderOutlineSummary, stripLineNumbers } from './document-outline.ts';
import { pickDemoFile } from './demo-workspace.ts';

/** The provider id of the offline demo. */
export const demoProviderId = 'demo';
/** The only model of the offline demo: the seed's running example. */
export const demoModelId = 'running-example';
/** The tool the demo asks for. */
const readToolName = 'read_file';
/** The tool of the example's second step, which the default approval mode asks about. */
const shellToolName = 'bash';
const readPrefix = 'demo_read_';
const countPrefix = 'demo_count_';
/** The label every front end shows beside the demo model. */
export const demoModelLabel = 'Demo: the running example (offline, scripted — not a real model)';
const banner = '*Demo model (offline, scripted — not a real model).*';

const demoModelInfo: ModelInfo = Object.freeze({
  contextWindow: 128_000,
  maxOutputTokens: 4_096,
  pricing: Object.freeze({ input: 0, output: 0 }),
  label: demoModelLabel,
  // It looks at nothing, but takes every prompt a real model would, so front ends can try images offline.
  images: true,
  demo: true,
});

/** Options of the demo provider. */
export interface DemoProviderOptions {
  /** The directory the demo looks in: fixed, or per session id; `process.cwd()` when it gives nothing. */
  cwd?: string | ((sessionId: string | undefined) => string | undefined);
  /** Pause before each streamed chunk, in milliseconds (abort-aware); 8 by default, for a typing feel. */
  delayMs?: number;
}

/**
 * The offline demo model `demo/running-example`: it plays the seed's running example in the agent's
 * directory — one turn of three steps: it asks to `read_file` the README (or the first text file), then
 * to count its lines and words with `bash` (which the default approval mode asks about), then
 * summarizes the headings of what the tools returned, computed locally, and stops. It never touches
 * the network.
 */
export class DemoProvider implements LlmAdapter {
  readonly provider = demoProviderId;
  readonly #cwd: DemoProviderOptions['cwd'];
  readonly #delayMs: number;

  constructor(options: DemoProviderOptions = {}) {
    this.#cwd = options.cwd;
    const delay = options.delayMs ?? 8;
    this.#delayMs = Number.isFinite(delay) && delay >= 0 ? delay : 8;
  }

  listModels(): readonly string[] {
    return [demoModelId];
  }

  describeModel(model: string): ModelInfo | undefined {
    return model === demoModelId ? demoModelInfo : undefined;
  }

  stream(request: LlmRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
    if (request.model !== demoModelId) {
      throw new LlmError({
        code: 'UNKNOWN_MODEL',
        message: `the demo provider has only the model '${demoModelId}', not '${request.model}'`,
      });
    }
    return this.#play(request, signal);
  }

  async *#play(request: LlmRequest, signal: AbortSignal): AsyncGenerator<StreamChunk, void, undefined> {
    const reply = await this.#reply(request);
    let index = 0;
    const chunks: StreamChunk[] = [{ type: 'block-start', index, blockType: 'text' }];
    for (const word of reply.text.match(/\S+\s*|\s+/g) ?? [])
      chunks.push({ type: 'text-delta', index, text: word });
    chunks.push({ type: 'block-end', index, block: { type: 'text', text: reply.text } });
    index++;
    if (reply.call !== undefined) {
      const call = reply.call;
      chunks.push({ type: 'block-start', index, blockType: 'tool-call' });
      chunks.push({
        type: 'tool-call-delta',
        index,
        id: call.id,
        name: call.name,
        argumentsDelta: call.arguments,
      });
      chunks.push({ type: 'block-end', index, block: call });
    }
    chunks.push({ type: 'usage', usage: estimateUsage(request, reply.text) });
    chunks.push({ type: 'finish', reason: { kind: reply.call !== undefined ? 'tool-calls' : 'stop' } });
    for (const chunk of chunks) {
      await pause(this.#delayMs, signal);
      yield chunk;
    }
  }

  async #reply(request: LlmRequest): Promise<{ text: string; call?: ToolCallBlock }> {
    const answers = answeredDemoCalls(request.messages);
    const read = answers.find((answer) => answer.kind === 'read');
    const count = answers.find((answer) => answer.kind === 'count');
    if (read !== undefined) {
      const shell = request.tools?.find((candidate) => candidate.name === shellToolName);
      // The running example's second step: a shell command, which the default approval mode asks about.
      if (count === undefined && !read.isError && shell !== undefined) {
        const args = JSON.stringify({ command: `wc -l -w ${shellQuote(read.file)}` });
        return {
          text: `Now I'll count its lines and words with \`wc\` (a shell command, so it may ask for your approval).`,
          call: {
            type: 'tool-call',
            id: `${countPrefix}${randomUUID()}`,
            name: shellToolName,
            arguments: args,
          },
        };
      }
      return { text: summarize(read, count) };
    }
    const tool = request.tools?.find((candidate) => candidate.name === readToolName);
    if (tool === undefined) {
      return {
        text:
          `${banner}\n\nThis demo plays the running example: it reads a file with the \`${readToolName}` +
          '` tool and summarizes it. That tool is not available to this agent, so there is nothing to show.',
      };
    }
    const directory = this.#directoryFor(request.sessionId);
    const file = await pickDemoFile(directory);
    if (file === undefined) {
      return {
        text:
          `${banner}\n\nThis demo reads a README (or the first text file) in the working directory and ` +
          `summarizes it, but \`${directory}\` has no readable text file. Run it in a project directory.`,
      };
    }
    const args = JSON.stringify({ [pathParameter(tool)]: file });
    return {
      text: `${banner}${imagesSeen(request.messages)}\n\nI'll read \`${file}\` to see what this project is about.`,
      call: { type: 'tool-call', id: `${readPrefix}${randomUUID()}`, name: readToolName, arguments: args },
    };
  }

  #directoryFor(sessionId: string | undefined): string {
    const option = this.#cwd;
    const resolved = typeof option === 'function' ? option(sessionId) : option;
    return resolved ?? process.cwd();
  }
}

/** A sentence naming the images of the newest prompt, which the demo takes but does not look at. */
function imagesSeen(messages: readonly Message[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'user' || message.source.kind === 'tool') continue;
    const images = message.content.filter((block) => block.type === 'image');
    if (images.length === 0) return '';
    const named = images.map((image) =>
      image.data !== undefined
        ? `${image.mediaType}, ${formatBytes(decodedBytes(image.data))}`
        : image.mediaType,
    );
    return ` You attached ${images.length === 1 ? 'an image' : `${images.length} images`} (${named.join('; ')}); the demo takes it but does not look at it.`;
  }
  return '';
}

interface AnsweredCall {
  kind: 'read' | 'count';
  file: string;
  isError: boolean;
  text: string;
}

/**
 * The demo's own calls answered since the newest prompt, newest first. A prompt (any message that is
 * not a tool result) ends the look-back, so a new question is answered afresh even when an earlier
 * turn was stopped in the middle of the example.
 */
function answeredDemoCalls(messages: readonly Message[]): AnsweredCall[] {
  const answers: AnsweredCall[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'assistant') continue;
    const block = message.content[0];
    if (message.source.kind !== 'tool' || block?.type !== 'tool-result') break;
    const kind = block.toolCallId.startsWith(readPrefix)
      ? 'read'
      : block.toolCallId.startsWith(countPrefix)
        ? 'count'
        : undefined;
    if (kind === undefined) continue;
    const call = findCall(messages, index, block.toolCallId);
    answers.push({
      kind,
      file: call ?? 'the file',
      isError: block.isError === true,
      text: blockText(block.content),
    });
  }
  // A count belongs to the read before it; without that read the example starts over.
  return answers.some((answer) => answer.kind === 'read') ? answers : [];
}

function findCall(messages: readonly Message[], before: number, callId: string): string | undefined {
  for (let index = before - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type !== 'tool-call' || block.id !== callId) continue;
      try {
        const args = JSON.parse(block.arguments) as Record<string, unknown>;
        const value = Object.values(args).find((entry) => typeof entry === 'string');
        return typeof value === 'string' ? value : undefined;
      } catch {
        // The demo wrote these arguments itself; unparsable ones just lose the file name.
        return undefined;
      }
    }
  }
  return undefined;
}

function summarize(read: AnsweredCall, count: AnsweredCall | undefined): string {
  if (read.isError) {
    const reason = read.text.replace(/^Error:\s*/, '').trim() || 'no reason given';
    return `${banner}\n\nI could not read \`${read.file}\`: ${reason}\n\nWithout it there is nothing to summarize, so I'll stop here.`;
  }
  const outline = outlineDocument(stripLineNumbers(read.text));
  const summary = `${banner} Summary of \`${read.file}\`, computed locally from what \`${readToolName}\` returned:\n\n${renderOutlineSummary(read.file, outline)}`;
  return count === undefined ? summary : `${summary}\n\n${describeCount(count)}`;
}

function describeCount(count: AnsweredCall): string {
  if (count.isError) {
    const reason = count.text.replace(/^Error:\s*/, '').trim() || 'no reason given';
    return `I did not get the word count (\`wc\`): ${reason}`;
  }
  const match = /^\s*(\d+)\s+(\d+)/.exec(count.text);
  return match === null
    ? `\`wc\` said: ${count.text.trim()}`
    : `\`wc\` counts ${match[1]} lines and ${match[2]} words.`;
}

function shellQuote(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function blockText(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

function pathParameter(tool: ToolSchema): string {
  const properties = (tool.parameters as { properties?: Record<string, unknown> }).properties ?? {};
  return ['path', 'file_path', 'filePath', 'file'].find((name) => name in properties) ?? 'path';
}

function estimateUsage(request: LlmRequest, text: string): TokenUsage {
  let characters = request.system?.length ?? 0;
  for (const message of request.messages) characters += JSON.stringify(message.content).length;
  return { inputTokens: Math.ceil(characters / 4), outputTokens: Math.ceil(text.length / 4) };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const abort = (): LlmError => new LlmError({ code: 'ABORTED', message: 'request aborted' });
    if (signal.aborted) {
      reject(abort());
      return;
    }
    if (ms <= 0) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abort());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
