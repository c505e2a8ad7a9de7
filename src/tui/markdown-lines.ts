import type { MarkdownTheme } from '@mariozechner/pi-tui';
import { Markdown, truncateToWidth, visibleWidth } from '@mariozechner/pi-tui';

/**
 * Markdown rendered for the terminal. A streaming answer only grows, so what lies before its last blank
 * line outside code fences (whole blocks) is rendered once and kept; each frame renders only the open
 * tail, and the cost of a frame does not grow with the answer.
 */
export class MarkdownLines {
  readonly #theme: MarkdownTheme;
  readonly #indent: string;
  #width = -1;
  /** The prefix of the text already rendered: whole blocks, ending at a blank line outside any fence. */
  #closed = '';
  #closedLines: string[] = [];

  constructor(theme: MarkdownTheme, indent = '') {
    this.#theme = theme;
    this.#indent = indent;
  }

  /** The lines of `text` at `width` columns (each line fits the width). */
  render(text: string, width: number): string[] {
    const inner = Math.max(10, width - this.#indent.length);
    if (inner !== this.#width || !text.startsWith(this.#closed)) {
      this.#width = inner;
      this.#closed = '';
      this.#closedLines = [];
    }
    const rest = text.slice(this.#closed.length);
    const split = lastBlockBoundary(rest);
    if (split > 0) {
      // Everything that closed since the last frame is rendered in one pass.
      this.#append(this.#closedLines, rest.slice(0, split), inner);
      this.#closed += rest.slice(0, split);
    }
    const lines = this.#closedLines.slice();
    this.#append(lines, rest.slice(split), inner);
    return lines;
  }

  #append(lines: string[], markdown: string, inner: number): void {
    if (markdown.trim() === '') return;
    const rendered = new Markdown(markdown.trim(), 0, 0, this.#theme).render(inner);
    let end = rendered.length;
    while (end > 0 && rendered[end - 1]!.trim() === '') end--;
    let start = 0;
    while (start < end && rendered[start]!.trim() === '') start++;
    if (lines.length > 0 && end > start) lines.push('');
    const width = inner + this.#indent.length;
    for (let index = start; index < end; index++) {
      const line = this.#indent + rendered[index]!;
      // pi-tui's markdown already wraps to the width; the check only guards the indent.
      lines.push(visibleWidth(line) > width ? truncateToWidth(line, width) : line);
    }
  }
}

const fencePattern = /^\s{0,3}(`{3,}|~{3,})/;

/** The offset just after the last blank line of `text` that lies outside fenced code (0 when none). */
export function lastBlockBoundary(text: string): number {
  let fence: string | undefined;
  let boundary = 0;
  let offset = 0;
  let previousBlank = false;
  for (const line of text.split('\n')) {
    const end = offset + line.length + 1;
    const marker = fencePattern.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    }
    const blank = fence === undefined && marker === undefined && line.trim() === '';
    // A boundary needs the whole blank line: the text must go on after it.
    if (blank && end <= text.length && !previousBlank) boundary = end;
    previousBlank = blank;
    offset = end;
  }
  return boundary;
}
