/**
 * Splits growing markdown text into top-level blocks as it streams: a blank line outside a fenced code
 * block ends a block. Completed blocks never change, so a view renders each once and re-parses only
 * the open tail; each call scans only the text added since the last one.
 */
export class MarkdownBlockSplitter {
  /** The completed blocks, in order. */
  readonly blocks: string[] = [];
  #text = '';
  // Where the open block starts, and where the next unscanned line starts.
  #blockStart = 0;
  #lineStart = 0;
  #fence: string | undefined;

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
        const block = text.slice(this.#blockStart, this.#lineStart);
        if (block.trim() !== '') this.blocks.push(block);
        this.#blockStart = end + 1;
      }
      this.#lineStart = end + 1;
    }
    return text.slice(this.#blockStart);
  }

  #reset(): void {
    this.blocks.length = 0;
    this.#blockStart = 0;
    this.#lineStart = 0;
    this.#fence = undefined;
  }
}
