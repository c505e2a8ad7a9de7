import type { Component, TUI } from '@mariozechner/pi-tui';
import { truncateToWidth } from '@mariozechner/pi-tui';
import type { Transcript } from '../index.ts';
import { TranscriptLines } from './transcript-lines.ts';
import { TranscriptViewport } from './transcript-viewport.ts';
import type { TuiTheme } from './tui-theme.ts';

/**
 * What a resumed session shows while it is being opened for writing: the tail of its stored transcript
 * and a status line saying so (keys wait until the chat is ready).
 */
export class OpeningScreen implements Component {
  readonly #tui: TUI;
  readonly #transcript: Transcript;
  readonly #theme: TuiTheme;
  readonly #id: string;
  readonly #viewport: TranscriptViewport;
  /** What was typed meanwhile, for the chat to take over. */
  readonly typed: string[] = [];

  constructor(options: { tui: TUI; transcript: Transcript; theme: TuiTheme; id: string }) {
    this.#tui = options.tui;
    this.#transcript = options.transcript;
    this.#theme = options.theme;
    this.#id = options.id;
    const lines = new TranscriptLines(options.theme, { keyArgument: () => undefined });
    this.#viewport = new TranscriptViewport(lines, options.theme);
  }

  invalidate(): void {}

  handleInput(data: string): void {
    this.typed.push(data);
  }

  render(width: number): string[] {
    const rows = this.#tui.terminal.rows;
    const status = truncateToWidth(
      this.#theme.inverse(` opening session ${this.#id}… `.padEnd(width)),
      width,
    );
    return [...this.#viewport.render(this.#transcript.items, width, Math.max(0, rows - 1)), status];
  }
}
