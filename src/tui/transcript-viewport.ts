import type { ScreenItem } from './screen-item.ts';
import type { TranscriptLines } from './transcript-lines.ts';
import type { TuiTheme } from './tui-theme.ts';

/** The first line shown when scrolled up: an item and a line inside it. */
interface Anchor {
  item: number;
  line: number;
}

/**
 * The scrolling window over the transcript: follows the bottom until the user scrolls up, then stays
 * where it was while new lines arrive below, until End (or scrolling back down) follows again. Only the
 * items on screen are rendered.
 */
export class TranscriptViewport {
  readonly #lines: TranscriptLines;
  readonly #theme: TuiTheme;
  #anchor: Anchor | undefined;
  #lastTop: Anchor = { item: 0, line: 0 };

  constructor(lines: TranscriptLines, theme: TuiTheme) {
    this.#lines = lines;
    this.#theme = theme;
  }

  /** True while the view follows the newest lines. */
  get following(): boolean {
    return this.#anchor === undefined;
  }

  /** Follows the bottom again. */
  follow(): void {
    this.#anchor = undefined;
  }

  /** Scrolls by a number of lines (negative: up, towards older lines). */
  scroll(items: readonly ScreenItem[], delta: number, width: number): void {
    let anchor = { ...(this.#anchor ?? this.#lastTop) };
    if (delta < 0) {
      let remaining = -delta;
      while (remaining > 0) {
        if (anchor.line >= remaining) {
          anchor.line -= remaining;
          remaining = 0;
        } else if (anchor.item > 0) {
          remaining -= anchor.line + 1;
          anchor.item -= 1;
          anchor.line = Math.max(0, this.#lines.linesOf(items[anchor.item]!, width).length - 1);
        } else {
          anchor = { item: 0, line: 0 };
          remaining = 0;
        }
      }
      this.#anchor = anchor;
      return;
    }
    if (this.#anchor === undefined) return;
    let remaining = delta;
    while (remaining > 0 && anchor.item < items.length) {
      const count = this.#lines.linesOf(items[anchor.item]!, width).length;
      if (anchor.line + remaining < count) {
        anchor.line += remaining;
        remaining = 0;
      } else {
        remaining -= count - anchor.line;
        anchor = { item: anchor.item + 1, line: 0 };
      }
    }
    this.#anchor = anchor.item >= items.length ? undefined : anchor;
  }

  /** Exactly `height` lines of the transcript for a width. */
  render(items: readonly ScreenItem[], width: number, height: number): string[] {
    if (height <= 0) return [];
    if (this.#anchor !== undefined) {
      const shown = this.#fromAnchor(items, this.#anchor, width, height);
      if (shown !== undefined) return shown;
      this.#anchor = undefined;
    }
    return this.#bottom(items, width, height);
  }

  #fromAnchor(
    items: readonly ScreenItem[],
    anchor: Anchor,
    width: number,
    height: number,
  ): string[] | undefined {
    const lines: string[] = [];
    let index = Math.min(anchor.item, items.length - 1);
    let skip = anchor.line;
    while (index < items.length && lines.length < height) {
      const itemLines = this.#lines.linesOf(items[index]!, width);
      for (let line = skip; line < itemLines.length && lines.length < height; line++)
        lines.push(itemLines[line]!);
      skip = 0;
      index++;
    }
    // Reaching the end with room to spare means there is nothing below: follow again.
    if (lines.length < height) return undefined;
    lines[height - 1] = this.#theme.inverse(' ↓ more below — End or PgDn to follow '.slice(0, width));
    return lines;
  }

  #bottom(items: readonly ScreenItem[], width: number, height: number): string[] {
    const chunks: (readonly string[])[] = [];
    let count = 0;
    let index = items.length - 1;
    for (; index >= 0 && count < height; index--) {
      const itemLines = this.#lines.linesOf(items[index]!, width);
      chunks.push(itemLines);
      count += itemLines.length;
    }
    // Only the bottom `height` lines are copied, however long the top item is.
    const overflow = Math.max(0, count - height);
    const lines: string[] = [];
    let skip = overflow;
    for (let chunk = chunks.length - 1; chunk >= 0; chunk--) {
      const itemLines = chunks[chunk]!;
      if (skip >= itemLines.length) {
        skip -= itemLines.length;
        continue;
      }
      for (let line = skip; line < itemLines.length; line++) lines.push(itemLines[line]!);
      skip = 0;
    }
    // Where the top of the screen is, so that scrolling up starts from what is seen.
    let item = index + 1;
    let line = overflow;
    for (let chunk = chunks.length - 1; chunk >= 0 && line >= chunks[chunk]!.length; chunk--) {
      line -= chunks[chunk]!.length;
      item++;
    }
    this.#lastTop = { item: Math.max(0, item), line: Math.max(0, line) };
    while (lines.length < height) lines.unshift('');
    return lines;
  }
}
