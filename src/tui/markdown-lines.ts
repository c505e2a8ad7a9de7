import type { MarkdownTheme } from '@mariozechner/pi-tui';
import { Markdown, truncateToWidth } from '@mariozechner/pi-tui';

/**
 * Markdown rendered for the terminal in independent blocks (split at blank lines outside code fences).
 * A streaming answer only grows, so the blocks before its last blank line are rendered once and kept;
 * each frame renders only the open tail, and the cost of a frame does not grow with the answer.
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
      for (const block of markdownBlocks(rest.slice(0, split))) this.#append(this.#closedLines, block, inner);
      this.#closed += rest.slice(0, split);
    }
    const lines = this.#closedLines.slice();
    for (const block of markdownBlocks(rest.slice(split))) this.#append(lines, block, inner);
    return lines;
  }

  #append(lines: string[], block: string, inner: number): void {
    let rendered = new Markdown(block, 0, 0, this.#theme).render(inner);
    while (rendered.length > 0 && rendered.at(-1)!.trim() === '') rendered = rendered.slice(0, -1);
    if (lines.length > 0 && rendered.length > 0) lines.push('');
    for (const line of rendered)
      lines.push(truncateToWidth(this.#indent + line, inner + this.#indent.length));
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

/** Splits markdown at blank lines that are outside fenced code blocks; blank edges are dropped. */
export function markdownBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | undefined;
  const flush = (): void => {
    if (current.length > 0) blocks.push(current.join('\n'));
    current = [];
  };
  for (const line of text.split('\n')) {
    const marker = fencePattern.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    }
    if (fence === undefined && marker === undefined && line.trim() === '') {
      flush();
      continue;
    }
    current.push(line);
  }
  flush();
  return blocks;
}
