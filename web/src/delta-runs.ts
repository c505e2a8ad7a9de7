import type { LogEvent } from './types.ts';
import { StreamedDeltaTexts, streamedDelta, streamedDeltaKey } from './sdk.ts';

/** A run of consecutive deltas of one block, as the server encodes it (`src/server/delta-runs.ts`). */
interface DeltaRun {
  run: 'text-delta' | 'reasoning-delta';
  turn: number;
  step: number;
  index: number;
  seq: number;
  time: number;
  texts: string[];
  gaps: number[];
}

/** An `assistant/message` whose blocks `from` names are the deltas this stream sent, joined. */
interface StreamedMessage {
  streamed: LogEvent;
  from: [content: number, index: number][];
}

/** A `block-end` chunk whose block's text is the deltas of its index this stream sent, joined. */
interface StreamedBlockEnd {
  ended: LogEvent;
}

/** A checkpoint `user/message` whose text block `block` is `before` + the last summary this stream sent + `after`. */
interface FramedSummary {
  framed: LogEvent;
  block: number;
  before: string;
  after: string;
}

/** An event (or a streamed message) sent without its `sourceEventSeqs`, which `sources` gives as `[first, count]` runs. */
interface SourcedEvent {
  sourced: LogEvent | StreamedMessage | FramedSummary;
  sources: [first: number, count: number][];
}

/** One entry of a `log-runs` message. */
export type LogRunEntry =
  LogEvent | DeltaRun | StreamedMessage | StreamedBlockEnd | FramedSummary | SourcedEvent;

/** A streamed message names deltas this decoder never saw: the stream must start over. */
export class DeltaRunMismatchError extends Error {
  readonly code = 'DELTA_RUN_MISMATCH';
}

/** The durable events of one `log-runs` message on its own (no earlier message of its stream needed). */
export function decodeDeltaRuns(entries: readonly LogRunEntry[]): LogEvent[] {
  return new DeltaRunDecoder().decode(entries);
}

/**
 * Decodes the `log-runs` messages of one stream, in order: runs are rebuilt into their events, and a
 * streamed message gets its blocks' text back from the deltas of this stream since the last message,
 * remembered by the rule the server's encoder uses (so the text is never parsed twice).
 */
export class DeltaRunDecoder {
  readonly #sent = new StreamedDeltaTexts();
  // The summary of the last `compaction/summary` this stream carried (the server's encoder keeps the same).
  #summary: string | undefined;

  /** The durable events of one message, in seq order. */
  decode(entries: readonly LogRunEntry[]): LogEvent[] {
    const events: LogEvent[] = [];
    for (const entry of entries) {
      if ('run' in entry) {
        this.#decodeRun(entry, events);
      } else if ('sourced' in entry) {
        const event = this.#decodeEvent(entry.sourced);
        // The field is the event's last, as logged.
        events.push({ ...event, sourceEventSeqs: expandSources(entry.sources) });
      } else events.push(this.#decodeEvent(entry));
    }
    return events;
  }

  #decodeEvent(entry: LogEvent | StreamedMessage | StreamedBlockEnd | FramedSummary): LogEvent {
    if ('framed' in entry) return this.#rebuildFramed(entry);
    if ('streamed' in entry) {
      const event = this.#rebuild(entry);
      this.#sent.clear();
      return event;
    }
    if ('ended' in entry) return this.#rebuildEnd(entry);
    this.#remember(entry);
    return entry;
  }

  #decodeRun(entry: DeltaRun, events: LogEvent[]): void {
    const { run: type, turn, step, index, texts, gaps } = entry;
    const sent = this.#sent.of(streamedDeltaKey(type, turn, step, index));
    let time = entry.time;
    for (let at = 0; at < texts.length; at++) {
      if (at > 0) time += gaps[at - 1]!;
      sent.push(texts[at]!);
      events.push({
        type: 'assistant/chunk',
        seq: entry.seq + at,
        time,
        data: { turn, step, chunk: { type, index, text: texts[at]! } },
      });
    }
  }

  #rebuildFramed({ framed, block, before, after }: FramedSummary): LogEvent {
    const data = framed.data as { content: { type: string }[] };
    const part = data.content[block];
    if (part === undefined || this.#summary === undefined)
      throw new DeltaRunMismatchError(`no summary for the checkpoint ${framed.seq}`);
    const content = [...data.content];
    content[block] = { ...part, text: before + this.#summary + after } as { type: string };
    return { ...framed, data: { ...data, content } };
  }

  // The server's rule, shared: a text or reasoning delta with numeric turn, step and index.
  #remember(event: LogEvent): void {
    if (event.type === 'compaction/summary') {
      const summary = (event.data as { summary?: unknown }).summary;
      this.#summary = typeof summary === 'string' ? summary : undefined;
    }
    if (event.type === 'assistant/message') {
      this.#sent.clear();
      return;
    }
    const delta = streamedDelta(event);
    if (delta !== undefined) this.#sent.of(delta.key).push(delta.text);
  }

  #rebuild({ streamed, from }: StreamedMessage): LogEvent {
    const data = streamed.data as { turn: number; step: number; message: { content: { type: string }[] } };
    const content = [...data.message.content];
    for (const [position, index] of from) {
      const block = content[position];
      const type = block?.type === 'reasoning' ? 'reasoning-delta' : 'text-delta';
      const texts = this.#sent.get(streamedDeltaKey(type, data.turn, data.step, index));
      if (block === undefined || texts === undefined)
        throw new DeltaRunMismatchError(`no deltas for block ${position} of message ${streamed.seq}`);
      content[position] = { ...block, text: texts.join('') } as { type: string };
    }
    return { ...streamed, data: { ...data, message: { ...data.message, content } } };
  }

  #rebuildEnd({ ended }: StreamedBlockEnd): LogEvent {
    const data = ended.data as {
      turn: number;
      step: number;
      chunk: { index: number; block: { type: string; text: string } };
    };
    const { chunk } = data;
    const type = chunk.block.type === 'reasoning' ? 'reasoning-delta' : 'text-delta';
    const texts = this.#sent.get(streamedDeltaKey(type, data.turn, data.step, chunk.index));
    if (texts === undefined) throw new DeltaRunMismatchError(`no deltas for the block end ${ended.seq}`);
    const block = { ...chunk.block, text: texts.join('') };
    return { ...ended, data: { ...data, chunk: { ...chunk, block } } };
  }
}

function expandSources(sources: readonly [first: number, count: number][]): number[] {
  const seqs: number[] = [];
  for (const [first, count] of sources) for (let at = 0; at < count; at++) seqs.push(first + at);
  return seqs;
}
