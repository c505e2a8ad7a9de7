import type { ServerResponse } from 'node:http';
import type { AnySessionEvent } from '../index.ts';
import { DeltaRunEncoder } from './delta-runs.ts';

/** Indexed read access to a log: a live session's `log`, or an array of stored events. */
export interface LogView {
  readonly length: number;
  at(index: number): AnySessionEvent | undefined;
}

/** Options of one event-stream client. */
export interface EventStreamClientOptions {
  /** The first durable seq to send. */
  from: number;
  /** The session's log as it stands now (the live log, or the stored one). */
  /** The log to send, read by index (a live session's log or a stored array). */
  source: () => LogView;
  /** The live state sent in a `resync` after live events had to be dropped. */
  snapshot: () => unknown;
  /** How many live (non-durable) events may wait for a slow client before they collapse into a resync. */
  liveLimit: number;
  /** Milliseconds between keep-alive comments. */
  heartbeatMs: number;
  /**
   * Sends runs of durable events as one `log-batch` message (a JSON array, SSE id = the last seq) instead
   * of one `log` message each: a browser then parses and dispatches one message per run, not per chunk.
   */
  batch?: boolean;
  /**
   * With `batch`: the least milliseconds between two writes while events keep coming (default 16, one
   * display frame). What is appended meanwhile waits in the log and goes out as one run, so a stream of
   * 20,000 chunks a second reaches a browser as about 60 messages, not one per chunk; the first event
   * after a pause goes out in the next macrotask.
   */
  batchIntervalMs?: number;
  /**
   * With `batch`: each run goes out as a `log-runs` message instead, its consecutive text and reasoning
   * deltas of one block encoded as one entry (`delta-runs.ts`) — a streaming answer in a tenth of the bytes
   * — and an answer's `assistant/message` without the texts its deltas already carried to this client.
   */
  deltaRuns?: boolean;
  onClose: () => void;
}

// Durable events per `log-batch` message at most.
const batchLimit = 1_000;
const defaultBatchIntervalMs = 16;

interface LiveEntry {
  /** The log length when the live event happened: it is sent after the durable events before it. */
  afterSeq: number;
  event: string;
  data: unknown;
}

/**
 * One server-sent-events client of a session. Durable events are read from the log through a cursor (the
 * log is the buffer, so a slow reader costs no memory and loses nothing; SSE ids are seqs); live events
 * wait in a bounded queue, and when it overflows they are dropped for one `resync` carrying fresh state.
 * Writing never blocks the agent: the client pumps on `drain`.
 */
export class EventStreamClient {
  readonly #response: ServerResponse;
  readonly #options: EventStreamClientOptions;
  readonly #live: LiveEntry[] = [];
  readonly #heartbeat: NodeJS.Timeout;
  #next: number;
  #blocked = false;
  #resync = false;
  #closed = false;
  #scheduled = false;
  #timer:
    { kind: 'timeout'; handle: NodeJS.Timeout } | { kind: 'immediate'; handle: NodeJS.Immediate } | undefined;
  // When this client last wrote (batch mode's pacing), on the monotonic clock.
  #wroteAt = Number.NEGATIVE_INFINITY;
  // With `deltaRuns`: this stream's encoder (it remembers the deltas sent until their message).
  #runs: DeltaRunEncoder | undefined;

  constructor(response: ServerResponse, options: EventStreamClientOptions) {
    this.#response = response;
    this.#options = options;
    this.#next = Math.max(0, options.from);
    response.on('close', () => this.close());
    response.on('drain', () => {
      this.#blocked = false;
      this.#pump();
    });
    this.#heartbeat = setInterval(() => {
      if (!this.#closed && !this.#blocked) this.#response.write(': keep-alive\n\n');
    }, options.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** The next durable seq this client will be sent. */
  get nextSeq(): number {
    return this.#next;
  }

  /** True once the connection closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Sends the durable events that have been appended since. */
  notifyLog(): void {
    this.#schedule();
  }

  /** Queues a live event; overflowing the bound replaces the queue with one resync. */
  pushLive(event: string, data: unknown): void {
    if (this.#closed) return;
    if (this.#live.length >= this.#options.liveLimit) {
      this.#live.length = 0;
      this.#resync = true;
    } else {
      this.#live.push({ afterSeq: this.#options.source().length, event, data });
    }
    this.#schedule();
  }

  /** Ends the stream with a final event. */
  end(event: string, data: unknown): void {
    if (this.#closed) return;
    this.#write(event, data);
    this.#response.end();
    this.close();
  }

  /** Releases the client (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#cancelTimer();
    this.#live.length = 0;
    if (!this.#response.writableEnded) this.#response.end();
    this.#options.onClose();
  }

  #schedule(): void {
    // Coalesces a burst of appends into one pump after the appending code returns.
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = true;
    if (this.#options.batch !== true) {
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#pump();
      });
      return;
    }
    // A batch client waits for the rest of the current I/O turn (setImmediate), and while events keep
    // coming, for the rest of its interval: the log holds what arrives meanwhile.
    const interval = this.#options.batchIntervalMs ?? defaultBatchIntervalMs;
    const wait = this.#wroteAt + interval - performance.now();
    const run = (): void => {
      this.#timer = undefined;
      this.#scheduled = false;
      this.#pump();
    };
    this.#timer =
      wait > 1
        ? { kind: 'timeout', handle: setTimeout(run, wait) }
        : { kind: 'immediate', handle: setImmediate(run) };
  }

  #cancelTimer(): void {
    if (this.#timer?.kind === 'timeout') clearTimeout(this.#timer.handle);
    else if (this.#timer?.kind === 'immediate') clearImmediate(this.#timer.handle);
    this.#timer = undefined;
  }

  #pump(): void {
    while (!this.#closed && !this.#blocked) {
      const log = this.#options.source();
      if (this.#resync) {
        this.#resync = false;
        this.#write('resync', this.#options.snapshot());
        continue;
      }
      const live = this.#live[0];
      if (live !== undefined && (live.afterSeq <= this.#next || this.#next >= log.length)) {
        this.#live.shift();
        this.#write(live.event, live.data);
        continue;
      }
      const event = log.at(this.#next);
      if (event === undefined) return;
      if (this.#options.batch === true) {
        this.#writeBatch(log, event);
        continue;
      }
      this.#next = event.seq + 1;
      this.#write('log', event, event.seq);
    }
  }

  // One run of durable events: up to the next live event due, the end of the log, or the size bound.
  #writeBatch(log: LogView, first: AnySessionEvent): void {
    const events = [first];
    this.#next = first.seq + 1;
    const due = this.#live[0]?.afterSeq;
    while (events.length < batchLimit && (due === undefined || due > this.#next)) {
      const event = log.at(this.#next);
      if (event === undefined) break;
      events.push(event);
      this.#next = event.seq + 1;
    }
    if (this.#options.deltaRuns === true) {
      this.#runs ??= new DeltaRunEncoder();
      this.#write('log-runs', this.#runs.encode(events), this.#next - 1);
    } else this.#write('log-batch', events, this.#next - 1);
  }

  #write(event: string, data: unknown, id?: number): void {
    this.#wroteAt = performance.now();
    const frame = `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    if (!this.#response.write(frame)) this.#blocked = true;
  }
}
