import type { AnySessionEvent, StreamChunk, ToolResultMessage, TurnEndReason } from '../index.ts';
import type { CliIo } from './cli-io.ts';
import { describePluginRecord } from './plugin-records.ts';
import { Spinner } from './spinner.ts';

/** Where `rein run` reports what happens: human-readable text, or JSON lines. */
export interface RunOutput {
  /** One durable event of the run's session, in seq order. */
  event(event: AnySessionEvent): void;
  /** A live (not stored) status line, e.g. `agent/status`. */
  live(type: string, data: unknown): void;
  /** Something the user should know (printed on stderr in text mode). */
  notice(message: string): void;
  /** Stops any progress indicator. */
  close(): void;
}

/** The shape of one `--json` line for a durable event. */
export interface JsonEventLine {
  seq: number;
  type: string;
  time: number;
  data: unknown;
}

/** `--json`: every durable event as `{ seq, type, time, data }`, live lines as `{ live: true, type, time, data }`. */
export class JsonRunOutput implements RunOutput {
  readonly #io: CliIo;

  constructor(io: CliIo) {
    this.#io = io;
  }

  event(event: AnySessionEvent): void {
    const line: JsonEventLine = { seq: event.seq, type: event.type, time: event.time, data: event.data };
    this.#io.stdout.write(`${JSON.stringify(line)}\n`);
  }

  live(type: string, data: unknown): void {
    this.#io.stdout.write(`${JSON.stringify({ live: true, type, time: Date.now(), data })}\n`);
  }

  notice(message: string): void {
    this.live('notice', { message });
  }

  close(): void {
    // JSON output has no progress indicator to stop.
  }
}

const quietTypes = new Set([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'user/message',
  'request/header',
  'request/context',
  'agent/inbox/spliced',
  'agent/cancelled',
  'session/end-seed',
  'tool/approval-requested',
  'compaction/start',
  'compaction/end',
  'llm/retry-started',
]);

/** Text mode: the answer on stdout; tool activity, approvals, retries and notices on stderr. */
export class TextRunOutput implements RunOutput {
  readonly #io: CliIo;
  readonly #spinner: Spinner;
  readonly #calls = new Map<string, string>();
  #atLineStart = true;
  // Whether stdout has answer text, and whether the current step has added some yet: the text of
  // separate steps is kept apart by a blank line instead of running together.
  #printedText = false;
  #stepPrinted = false;

  constructor(io: CliIo) {
    this.#io = io;
    this.#spinner = new Spinner(io.stderr);
  }

  event(event: AnySessionEvent): void {
    switch (event.type) {
      case 'assistant/chunk':
        this.#chunk((event.data as { chunk: StreamChunk }).chunk);
        return;
      case 'step/start':
        this.#stepPrinted = false;
        this.#spinner.start('waiting for the model…');
        return;
      case 'turn/end':
        this.#spinner.stop();
        this.#endLine();
        return;
      case 'assistant/message': {
        this.#spinner.stop();
        this.#endLine();
        if ((event.data as { interrupted?: true }).interrupted === true)
          this.#info('(the answer was interrupted)');
        return;
      }
      case 'tool/call': {
        const data = event.data as { callId: string; name: string; arguments: string };
        this.#calls.set(data.callId, data.name);
        this.#spinner.stop();
        this.#endLine();
        this.#info(`⏺ ${data.name} ${shorten(data.arguments, 100)}`);
        this.#spinner.start(`running ${data.name}…`);
        return;
      }
      case 'tool/approval-decided': {
        const data = event.data as { decision: string; reason?: string };
        if (data.decision !== 'deny') return;
        this.#spinner.stop();
        this.#info(`  ✗ denied${data.reason !== undefined ? `: ${data.reason}` : ''}`);
        return;
      }
      case 'tool/result': {
        this.#spinner.stop();
        this.#toolResult(event.data as { message: ToolResultMessage; error?: { code: string } });
        this.#spinner.start('waiting for the model…');
        return;
      }
      case 'request/failed': {
        const failure = (event.data as { failure: { code: string; message: string } }).failure;
        this.#spinner.stop();
        this.#endLine();
        this.#info(`! request failed — ${failure.code}: ${oneLine(failure.message)}`);
        return;
      }
      case 'llm/retry': {
        const data = event.data as {
          attempt?: number;
          retry?: number;
          delayMs?: number;
          failure?: { code?: string };
        };
        const attempt = data.attempt ?? data.retry;
        const seconds = ((data.delayMs ?? 0) / 1000).toFixed(1);
        this.#info(
          `↻ retry${attempt !== undefined ? ` ${attempt}` : ''} in ${seconds}s after ${data.failure?.code ?? 'a failure'}`,
        );
        return;
      }
      case 'compaction/summary':
        this.#info('⋯ older history was summarized to fit the context window');
        return;
      case 'compaction/prune':
        this.#info('⋯ oversized tool results were shortened to fit the context window');
        return;
      default: {
        if (quietTypes.has(event.type)) return;
        this.#spinner.stop();
        this.#endLine();
        this.#info(
          describePluginRecord(event) ?? `· ${event.type} ${shorten(JSON.stringify(event.data), 120)}`,
        );
      }
    }
  }

  live(_type: string, _data: unknown): void {
    // Live status is shown by the spinner in text mode.
  }

  notice(message: string): void {
    this.#spinner.stop();
    this.#endLine();
    this.#info(message);
  }

  close(): void {
    this.#spinner.stop();
    this.#endLine();
  }

  #chunk(chunk: StreamChunk): void {
    if (chunk.type === 'text-delta') {
      if (chunk.text === '') return;
      this.#spinner.stop();
      if (!this.#stepPrinted && this.#printedText) {
        this.#endLine();
        this.#io.stdout.write('\n');
      }
      this.#stepPrinted = true;
      this.#printedText = true;
      this.#io.stdout.write(chunk.text);
      this.#atLineStart = chunk.text.endsWith('\n');
    } else if (chunk.type === 'reasoning-delta') {
      this.#spinner.start('thinking…');
    }
  }

  #toolResult(data: { message: ToolResultMessage; error?: { code: string } }): void {
    const block = data.message.content[0];
    const name = this.#calls.get(data.message.source.callId) ?? 'tool';
    if (block?.type !== 'tool-result' || block.isError !== true) {
      this.#info(`  ✓ ${name}`);
      return;
    }
    const text = block.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    const code = data.error?.code;
    this.#info(
      `  ✗ ${name}${code !== undefined ? ` ${code}` : ''}: ${shorten(oneLine(text.replace(/^Error:\s*/, '')), 160)}`,
    );
  }

  #endLine(): void {
    if (!this.#atLineStart) this.#io.stdout.write('\n');
    this.#atLineStart = true;
  }

  #info(line: string): void {
    this.#io.stderr.write(`${line}\n`);
  }
}

/** A one-line description of how a turn ended. */
export function describeTurnEnd(reason: TurnEndReason): string {
  switch (reason.kind) {
    case 'completed':
      return 'completed';
    case 'max-tokens':
      return 'the model stopped at its output limit (max-tokens)';
    case 'blocked':
      return 'the turn was stopped before its next model request (blocked)';
    case 'error':
      return `error ${reason.error.code}: ${oneLine(reason.error.message)}`;
    case 'aborted':
      return 'aborted';
    case 'interrupted':
      return 'interrupted';
  }
}

function shorten(text: string, max: number): string {
  const flat = oneLine(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
