import type { MarkdownTheme } from '@mariozechner/pi-tui';
import { Markdown } from '@mariozechner/pi-tui';

/**
 * Markdown rendered for the terminal in independent blocks (split at blank lines outside code fences),
 * each cached by its text and width: while an answer streams only its last block is rendered again, so
 * the cost of a frame does not grow with the length of the answer.
 */
export class MarkdownLines {
  readonly #theme: MarkdownTheme;
  readonly #indent: string;
  #cache = new Map<string, readonly string[]>();
  #width = -1;

  constructor(theme: MarkdownTheme, indent = '') {
    this.#theme = theme;
    this.#indent = indent;
  }

  /** The lines of `text` at `width` columns (each line fits the width). */
  render(text: string, width: number): string[] {
    const inner = Math.max(10, width - this.#indent.length);
    if (inner !== this.#width) {
      this.#cache = new Map();
      this.#width = inner;
    }
    const lines: string[] = [];
    const used = new Map<string, readonly string[]>();
    for (const block of markdownBlocks(text)) {
      let rendered = used.get(block) ?? this.#cache.get(block);
      if (rendered === undefined) {
        rendered = new Markdown(block, 0, 0, this.#theme).render(inner);
        while (rendered.length > 0 && rendered.at(-1)!.trim() === '') rendered = rendered.slice(0, -1);
      }
      used.set(block, rendered);
      if (lines.length > 0 && rendered.length > 0) lines.push('');
      for (const line of rendered) lines.push(this.#indent + line);
    }
    // Only the blocks of the latest text stay cached: an answer that streams on drops its old tail block.
    this.#cache = used;
    return lines;
  }
}

/** Splits markdown at blank lines that are outside fenced code blocks; blocks are trimmed of blank edges. */
export function markdownBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | undefined;
  const flush = (): void => {
    if (current.length > 0) blocks.push(current.join('\n'));
    current = [];
  };
  for (const line of text.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0]!.repeat(marker.length);
      else if (marker.startsWith(fence)) fence = undefined;
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
