import type { AnySessionEvent, AssistantItem, ReinWarning, ToolCard, TranscriptItem } from '../index.ts';
import { Transcript, defaultRecordViews } from '../index.ts';
import { reinWarningLine } from '../internal.ts';
import type { CliIo } from './cli-io.ts';
import { Spinner } from './spinner.ts';
import {
  compactionLines,
  otherEventLine,
  recordLine,
  requestFailedLine,
  retryLine,
  toolCallLine,
  toolResultLine,
} from './transcript-lines.ts';

/** Where `rein run` reports what happens: human-readable text, or JSON lines. */
export interface RunOutput {
  /** One durable event of the run's session, in seq order. */
  event(event: AnySessionEvent): void;
  /** A live (not stored) status line, e.g. `agent/status`. */
  live(type: string, data: unknown): void;
  /** Something the user should know (printed on stderr in text mode). */
  notice(message: string): void;
  /** A warning about the harness's composition (the sandbox fell back, a config key is unknown). */
  warning(warning: ReinWarning): void;
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

  // A notice like any other, with the code and source to route on.
  warning(warning: ReinWarning): void {
    this.live('notice', { message: reinWarningLine(warning), code: warning.code, source: warning.source });
  }

  close(): void {
    // JSON output has no progress indicator to stop.
  }
}

/** Text mode: the answer on stdout; tool activity, approvals, retries and notices on stderr. */
export class TextRunOutput implements RunOutput {
  readonly #io: CliIo;
  readonly #spinner: Spinner;
  readonly #transcript = new Transcript({ views: defaultRecordViews });
  /** Per item key: how much of an answer's text is printed, or which lines of a card or compaction are. */
  readonly #printed = new Map<string, number>();
  readonly #said = new Set<string>();
  #atLineStart = true;
  #retryEndsAt = 0;
  // Whether stdout has answer text yet: the answers of separate steps are kept apart by a blank line.
  #printedText = false;

  constructor(io: CliIo) {
    this.#io = io;
    this.#spinner = new Spinner(io.stderr);
  }

  event(event: AnySessionEvent): void {
    const touched = this.#transcript.apply(event);
    if (touched === undefined) return;
    for (const item of touched) this.#show(item);
    this.#syncSpinner();
  }

  live(_type: string, _data: unknown): void {
    // Live status is shown by the spinner in text mode.
  }

  notice(message: string): void {
    this.#spinner.stop();
    this.#endLine();
    this.#info(message);
  }

  warning(warning: ReinWarning): void {
    this.notice(reinWarningLine(warning));
  }

  close(): void {
    this.#spinner.stop();
    this.#endLine();
  }

  #show(item: TranscriptItem): void {
    switch (item.kind) {
      case 'assistant':
        this.#answer(item);
        return;
      case 'tool':
        this.#tool(item);
        return;
      case 'request-failed':
        this.#line(item.key, requestFailedLine(item));
        return;
      case 'retry':
        this.#retryEndsAt = item.endsAt;
        this.#line(item.key, retryLine(item));
        return;
      case 'compaction':
        for (const line of compactionLines(item)) this.#line(`${item.key}:${line}`, line);
        return;
      case 'record':
        this.#line(item.key, recordLine(item));
        return;
      case 'event':
        this.#line(item.key, otherEventLine(item.type, item.data, 120));
        return;
      case 'turn-end':
        this.#endLine();
        return;
      case 'turn-start':
      case 'user':
      case 'cancelled':
        // The prompt is the user's own; how the run ended is reported once at exit.
        return;
    }
  }

  #answer(item: AssistantItem): void {
    const text = item.blocks.map((block) => (block.type === 'text' ? block.text : '')).join('');
    const printed = this.#printed.get(item.key) ?? 0;
    if (text.length > printed) {
      this.#spinner.stop();
      if (printed === 0 && this.#printedText) {
        this.#endLine();
        this.#io.stdout.write('\n');
      }
      this.#printedText = true;
      this.#io.stdout.write(text.slice(printed));
      this.#printed.set(item.key, text.length);
      this.#atLineStart = text.endsWith('\n');
    }
    if (item.streaming) return;
    this.#endLine();
    if (item.interrupted) this.#line(`${item.key}:interrupted`, '(the answer was interrupted)');
  }

  #tool(card: ToolCard): void {
    if (card.state !== 'requested' && card.state !== 'awaiting-approval')
      this.#line(`${card.key}:call`, toolCallLine(card, 100));
    if (card.approval?.decision === 'deny') {
      const reason = card.approval.decisionReason;
      this.#line(`${card.key}:deny`, `  ✗ denied${reason !== undefined ? `: ${reason}` : ''}`);
    }
    if (card.result !== undefined)
      this.#line(`${card.key}:result`, toolResultLine(card, { countLines: false, max: 160 }));
  }

  /** Prints a line once per id (items change in place; each of their lines is news only once). */
  #line(id: string, line: string): void {
    if (this.#said.has(id)) return;
    this.#said.add(id);
    this.#spinner.stop();
    this.#endLine();
    this.#info(line);
  }

  #syncSpinner(): void {
    const activity = this.#transcript.activity;
    switch (activity.kind) {
      case 'waiting': {
        // After a retry record, a live countdown until the next attempt starts.
        const endsAt = this.#retryEndsAt;
        this.#spinner.start(() => {
          const left = Math.ceil((endsAt - Date.now()) / 1000);
          return left > 0 ? `retrying in ${left}s…` : 'waiting for the model…';
        });
        return;
      }
      case 'thinking':
        this.#spinner.start('thinking…');
        return;
      case 'tool': {
        const progress = activity.progress;
        const of = progress?.total !== undefined ? `/${progress.total}` : '';
        const note =
          progress?.message !== undefined ? ` ${progress.message.replace(/\s+/g, ' ').trim()}` : '';
        this.#spinner.start(
          progress === undefined
            ? `running ${activity.name}…`
            : `running ${activity.name}… ${progress.progress}${of}${note}`,
        );
        return;
      }
      case 'compacting':
        this.#spinner.start('compacting…');
        return;
      case 'writing':
      case 'approval':
      case 'idle':
        this.#spinner.stop();
        return;
    }
  }

  #endLine(): void {
    if (!this.#atLineStart) this.#io.stdout.write('\n');
    this.#atLineStart = true;
  }

  #info(line: string): void {
    this.#io.stderr.write(`${line}\n`);
  }
}
