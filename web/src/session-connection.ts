import { ApiError, api, openStream } from './api.ts';
import { DeltaRunDecoder, DeltaRunMismatchError } from './delta-runs.ts';
import type { LogRunEntry } from './delta-runs.ts';
import { fetchHistoryPage } from './session-history.ts';
import type { HistoryPage } from './session-history.ts';
import { ServerSentEventParser } from './server-sent-events.ts';
import type { ServerSentEvent } from './server-sent-events.ts';
import type { ApprovalRequest, LiveState, LogEvent, WireMessage } from './types.ts';

// Events folded per frame at most for this long (in slices of this many), the rest in the next frame.
const foldBudgetMs = 4;
const foldSlice = 256;

/** What the connection reports to the app. */
export interface ConnectionHandlers {
  /** Durable events, in seq order (possibly repeated after a reconnect: the transcript drops repeats). */
  onLog(events: LogEvent[]): void;
  /** The last turns of the history, with the carry of what came before them (the first thing handed over). */
  onHistory(page: HistoryPage): void;
  /** A full live state (on connect and on resync). */
  onState(state: LiveState): void;
  onStatus(status: 'idle' | 'running'): void;
  onInbox(inbox: { nextTurn: WireMessage[]; nextStep: WireMessage[] }): void;
  onApprovals(approvals: ApprovalRequest[]): void;
  onConnection(state: 'connecting' | 'open' | 'reconnecting'): void;
  /** The server ended the stream for good (the session was deleted). */
  onClosed(reason: string): void;
  /** The stream cannot be opened and retrying will not help: no such session, or the token is refused. */
  onRefused(code: 'SESSION_NOT_FOUND' | 'UNAUTHORIZED'): void;
  /** The next seq the app still needs (for reconnects that must not skip anything). */
  nextSeq(): number;
}

/**
 * One session's event stream with automatic reconnection: the stream is read with `fetch` (the token in
 * its header, the server's refusal in its status) and parsed as each network read arrives; when it ends
 * or breaks, a new stream starts `from` the next seq the app needs, after a backoff.
 */
export class SessionConnection {
  readonly #sessionId: string;
  readonly #handlers: ConnectionHandlers;
  // Aborting it ends the stream being read (a reopen starts the next with its own).
  #controller: AbortController | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #attempt = 0;
  #stopped = false;
  #pending: LogEvent[] = [];
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #flushFrame: number | undefined;

  constructor(sessionId: string, handlers: ConnectionHandlers) {
    this.#sessionId = sessionId;
    this.#handlers = handlers;
  }

  /**
   * Opens the stream. The history's last turns are fetched first as one JSON answer and handed over in
   * one batch (one parse and one fold, then one paint), instead of replaying every stored event as its
   * own stream message; earlier turns are loaded on demand (`EarlierHistory`); the stream then starts
   * after the page.
   */
  start(): void {
    void this.#catchUp().then(() => this.#open());
  }

  async #catchUp(): Promise<void> {
    this.#handlers.onConnection('connecting');
    try {
      if (this.#handlers.nextSeq() === 0) {
        const page = await fetchHistoryPage(this.#sessionId);
        if (!this.#stopped) this.#handlers.onHistory(page);
        return;
      }
      const answer = await api<{ events: LogEvent[] }>(
        'GET',
        `/api/sessions/${encodeURIComponent(this.#sessionId)}/events?from=${this.#handlers.nextSeq()}&settled=1`,
      );
      // Without the chunks of answered steps: their messages carry the same blocks.
      if (!this.#stopped && answer.events.length > 0) this.#handlers.onLog(answer.events);
    } catch (error) {
      // The stream reports why it cannot open (no such session, a refused token) and replays the history.
      if (!(error instanceof ApiError)) throw error;
    }
  }

  /** Closes the stream for good. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    this.#cancelFlush();
    this.#controller?.abort();
    this.#controller = undefined;
  }

  #open(): void {
    if (this.#stopped) return;
    this.#handlers.onConnection(this.#attempt === 0 ? 'connecting' : 'reconnecting');
    const controller = new AbortController();
    this.#controller = controller;
    void this.#read(controller.signal);
  }

  /**
   * Reads one stream until it ends: messages are handed over as each network read completes them. A
   * stream that ends or breaks is opened again from the next seq the app needs; one the server refuses
   * for good (no such session, a wrong token) stops the connection.
   */
  async #read(signal: AbortSignal): Promise<void> {
    const from = this.#handlers.nextSeq();
    let response: Response;
    try {
      response = await openStream(
        `/api/sessions/${encodeURIComponent(this.#sessionId)}/stream?from=${from}&batch=1&runs=1`,
        signal,
      );
    } catch (error) {
      if (signal.aborted) return;
      if (
        error instanceof ApiError &&
        (error.code === 'SESSION_NOT_FOUND' || error.code === 'UNAUTHORIZED')
      ) {
        this.stop();
        this.#handlers.onRefused(error.code);
        return;
      }
      // Any other failure (the server restarting, a network blip) is retried with backoff.
      this.#reopen();
      return;
    }
    this.#attempt = 0;
    this.#handlers.onConnection('open');
    const dispatch = this.#dispatcher();
    const parser = new ServerSentEventParser();
    const reader = response.body!.getReader();
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        // The connection broke (or was aborted, which rejects the read): a new stream continues below.
        if (!(error instanceof Error)) throw error;
        break;
      }
      if (read.done || signal.aborted) break;
      for (const message of parser.push(read.value)) {
        try {
          dispatch(message);
        } catch (error) {
          // As an event listener's exception would be: reported, and the stream read on.
          reportError(error);
        }
        // A handler reopened or stopped the connection: this stream's later messages are not wanted.
        if (signal.aborted) break;
      }
    }
    // A message the stream's end cut off is dropped; an aborted stream's body is already cancelled.
    parser.end();
    if (!signal.aborted) this.#reopen();
  }

  /** The handler of one stream's messages (each stream has its own delta-run decoder). */
  #dispatcher(): (message: ServerSentEvent) => void {
    const receive = (events: readonly LogEvent[]): void => {
      const first = events[0];
      if (first === undefined) return;
      if (first.seq > this.#expected()) {
        // A gap would mean a lost event: start over from what is still needed.
        this.#reopen();
        return;
      }
      for (const event of events) this.#pending.push(event);
      this.#flushSoon();
    };
    // One decoder per stream: an answer's message refers to the deltas this stream carried before it.
    const runs = new DeltaRunDecoder();
    const live = (handle: () => void): void => {
      // A live event comes after every durable event before it.
      this.#flush();
      handle();
    };
    return ({ event, data }) => {
      switch (event) {
        case 'log':
          receive([JSON.parse(data) as LogEvent]);
          break;
        // Runs of durable events in one message (asked for with `batch=1`), deltas as runs (`runs=1`).
        case 'log-batch':
          receive(JSON.parse(data) as LogEvent[]);
          break;
        case 'log-runs': {
          let events: LogEvent[];
          try {
            events = runs.decode(JSON.parse(data) as LogRunEntry[]);
          } catch (error) {
            // Not expected (both ends remember the same deltas); a new stream sends the message whole.
            if (!(error instanceof DeltaRunMismatchError)) throw error;
            this.#reopen();
            return;
          }
          receive(events);
          break;
        }
        case 'hello':
        case 'resync':
        case 'state':
          live(() => this.#handlers.onState(JSON.parse(data) as LiveState));
          break;
        case 'status':
          live(() => this.#handlers.onStatus((JSON.parse(data) as { status: 'idle' | 'running' }).status));
          break;
        case 'inbox':
          live(() =>
            this.#handlers.onInbox(JSON.parse(data) as { nextTurn: WireMessage[]; nextStep: WireMessage[] }),
          );
          break;
        case 'approvals':
          live(() =>
            this.#handlers.onApprovals((JSON.parse(data) as { approvals: ApprovalRequest[] }).approvals),
          );
          break;
        case 'closed':
          live(() => {
            const { reason } = JSON.parse(data) as { reason: string };
            if (reason === 'deleted') {
              this.stop();
              this.#handlers.onClosed(reason);
            } else this.#reopen();
          });
          break;
        default:
        // A message this page does not know (a newer server's) is skipped.
      }
    };
  }

  #expected(): number {
    const last = this.#pending[this.#pending.length - 1];
    return last !== undefined ? Math.max(last.seq + 1, this.#handlers.nextSeq()) : this.#handlers.nextSeq();
  }

  #reopen(): void {
    this.#flush();
    this.#controller?.abort();
    this.#controller = undefined;
    if (this.#stopped) return;
    this.#handlers.onConnection('reconnecting');
    const delay = Math.min(10_000, 250 * 2 ** this.#attempt);
    this.#attempt++;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => this.#open(), delay);
  }

  #flushSoon(): void {
    // Streaming text arrives chunk by chunk: fold and render once per animation frame. A hidden tab
    // gets no frames, so it folds on a slow timer to keep its state (and reconnects) current.
    if (this.#flushTimer !== undefined || this.#flushFrame !== undefined) return;
    if (document.visibilityState === 'hidden') this.#flushTimer = setTimeout(() => this.#flush(), 250);
    else this.#flushFrame = requestAnimationFrame(() => this.#flush(false));
  }

  #cancelFlush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#flushFrame !== undefined) cancelAnimationFrame(this.#flushFrame);
    this.#flushFrame = undefined;
  }

  /**
   * Hands the waiting events to the app: in an animation frame, slices of them until the fold budget is
   * spent (the rest waits for the next frame, so a burst never makes one long frame); everything when
   * `all` (a live event must come after every durable event before it).
   */
  #flush(all = true): void {
    this.#cancelFlush();
    const pending = this.#pending;
    if (pending.length === 0) return;
    const deadline = performance.now() + foldBudgetMs;
    let taken = 0;
    do {
      const end = Math.min(pending.length, taken + foldSlice);
      this.#handlers.onLog(taken === 0 && end === pending.length ? pending : pending.slice(taken, end));
      taken = end;
    } while (taken < pending.length && (all || performance.now() < deadline));
    this.#pending = taken === pending.length ? [] : pending.slice(taken);
    if (this.#pending.length > 0) this.#flushSoon();
  }
}
