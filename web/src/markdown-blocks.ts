/**
 * Splits growing markdown text into top-level blocks as it streams: a blank line outside a fenced code
 * block ends a block. Completed blocks never change, so a view renders each once and re-parses only
 * the open tail; each call scans only the text added since the last one. Blocks are kept as offsets
 * into the latest text, not as strings: a slice would keep alive the whole text it was cut from.
 */
export class MarkdownBlockSplitter {
  /** Counts the times the text did not extend the previous one and was split afresh (blocks restarted). */
  generation = 0;
  #text = '';
  // Where each completed block starts and ends in the text.
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];
  // Where the open block starts, and where the next unscanned line starts.
  #blockStart = 0;
  #lineStart = 0;
  #fence: string | undefined;

  /** How many blocks are complete. */
  get blockCount(): number {
    return this.#starts.length;
  }

  /** The text of completed block `index`. */
  block(index: number): string {
    return this.#text.slice(this.#starts[index], this.#ends[index]);
  }

  /** Where the open tail block starts in the text. */
  get tailStart(): number {
    return this.#blockStart;
  }

  /** Takes the whole text so far (it must extend the previous text); returns the open tail block. */
  update(text: string): string {
    // A text that does not extend the last one (a new attempt, an edit) is split afresh.
    const seen = this.#text.length;
    if (text.length < seen || text.slice(Math.max(0, seen - 32), seen) !== this.#text.slice(-32))
      this.#reset();
    this.#text = text;
    for (;;) {
      const end = text.indexOf('\n', this.#lineStart);
      if (end === -1) break;
      const line = text.slice(this.#lineStart, end);
      const fence = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence !== undefined && (this.#fence === undefined || fence.startsWith(this.#fence)))
        this.#fence = this.#fence === undefined ? fence : undefined;
      else if (this.#fence === undefined && line.trim() === '') {
        if (text.slice(this.#blockStart, this.#lineStart).trim() !== '') {
          this.#starts.push(this.#blockStart);
          this.#ends.push(this.#lineStart);
        }
        this.#blockStart = end + 1;
      }
      this.#lineStart = end + 1;
    }
    return text.slice(this.#blockStart);
  }

  #reset(): void {
    this.generation++;
    this.#starts.length = 0;
    this.#ends.length = 0;
    this.#blockStart = 0;
    this.#lineStart = 0;
    this.#fence = undefined;
  }
}
