/** One message of a `text/event-stream`, as the HTML standard's event stream interpretation dispatches it. */
export interface ServerSentEvent {
  /** The `event` field, or `message` when the message had none. */
  event: string;
  /** The `data` lines, joined with line feeds. */
  data: string;
  /** The last event ID buffer when the message was dispatched ('' until an `id` field sets it). */
  lastEventId: string;
}

// A line ends at CRLF, CR or LF (the standard's three); `lastIndex` walks each decoded piece.
const lineEnd = /\r\n|\r|\n/g;

/**
 * An incremental parser of the `text/event-stream` format (HTML standard, "Interpreting an event
 * stream"): bytes go in as the network hands them over, whole messages come out. A line split across
 * pieces (one 800 KB message arrives in dozens of reads) is kept as its pieces and joined once, so a
 * long line costs one pass over its bytes, not one per read.
 */
export class ServerSentEventParser {
  // UTF-8 with replacement, and the one leading byte order mark dropped, as the standard decodes.
  readonly #decoder = new TextDecoder('utf-8');
  // The start of a line whose end has not arrived yet.
  #partial: string[] = [];
  // A piece ended in CR: an LF starting the next piece belongs to that line end.
  #afterCarriageReturn = false;
  #eventType = '';
  #data: string[] = [];
  #lastEventId = '';
  #retryMs: number | undefined;

  /** The last reconnection time a `retry` field set, in milliseconds. */
  get retryMs(): number | undefined {
    return this.#retryMs;
  }

  /** The last event ID buffer (what a reconnection would send as `Last-Event-ID`). */
  get lastEventId(): string {
    return this.#lastEventId;
  }

  /** Feeds the next bytes of the stream; returns the messages they complete, in order. */
  push(bytes: Uint8Array): ServerSentEvent[] {
    return this.#text(this.#decoder.decode(bytes, { stream: true }));
  }

  /**
   * Ends the stream: a last line without its line end, and a message without the blank line that
   * dispatches it, are discarded, as the standard says (so a message cut off by a dropped connection
   * is never handed over).
   */
  end(): void {
    this.#decoder.decode();
    this.#partial = [];
    this.#afterCarriageReturn = false;
    this.#eventType = '';
    this.#data = [];
  }

  #text(text: string): ServerSentEvent[] {
    const messages: ServerSentEvent[] = [];
    let start = 0;
    if (this.#afterCarriageReturn && text.startsWith('\n')) start = 1;
    this.#afterCarriageReturn = false;
    lineEnd.lastIndex = start;
    for (let match = lineEnd.exec(text); match !== null; match = lineEnd.exec(text)) {
      let line = text.slice(start, match.index);
      if (this.#partial.length > 0) {
        this.#partial.push(line);
        line = this.#partial.join('');
        this.#partial = [];
      }
      start = lineEnd.lastIndex;
      // A CR at the piece's end may be the first half of a CRLF whose LF is in the next piece.
      if (start === text.length && match[0] === '\r') this.#afterCarriageReturn = true;
      this.#line(line, messages);
    }
    if (start < text.length) this.#partial.push(start === 0 ? text : text.slice(start));
    return messages;
  }

  #line(line: string, messages: ServerSentEvent[]): void {
    if (line === '') {
      this.#dispatch(messages);
      return;
    }
    if (line.charCodeAt(0) === 0x3a) return; // ':' starts a comment (the server's keep-alives)
    const colon = line.indexOf(':');
    let name = line;
    let value = '';
    if (colon >= 0) {
      name = line.slice(0, colon);
      value = line.charCodeAt(colon + 1) === 0x20 ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    switch (name) {
      case 'event':
        this.#eventType = value;
        break;
      case 'data':
        this.#data.push(value);
        break;
      case 'id':
        if (!value.includes('\u0000')) this.#lastEventId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.#retryMs = Number(value);
        break;
      default:
      // Any other field is ignored, as the standard says.
    }
  }

  #dispatch(messages: ServerSentEvent[]): void {
    const data = this.#data;
    const event = this.#eventType === '' ? 'message' : this.#eventType;
    this.#data = [];
    this.#eventType = '';
    if (data.length === 0) return;
    messages.push({
      event,
      data: data.length === 1 ? data[0]! : data.join('\n'),
      lastEventId: this.#lastEventId,
    });
  }
}
