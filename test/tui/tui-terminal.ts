import { createRequire } from 'node:module';
import type { IPty } from 'node-pty';
import xterm from '@xterm/headless';
import { reinBin } from '../cli/rein-process.ts';

const require = createRequire(import.meta.url);

/** node-pty, when its native module loads on this machine (it is built by its install script). */
export const pty: typeof import('node-pty') | undefined = (() => {
  try {
    return require('node-pty') as typeof import('node-pty');
  } catch {
    // No native build here: the TUI tests skip and say why.
    return undefined;
  }
})();

// Keys from the developer's shell must never make a test reach a real vendor.
const scrubbed = [
  'DEEPSEEK_API_KEY',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'DEEPSEEK_BASE_URL',
  'OPENAI_BASE_URL',
  'ANTHROPIC_BASE_URL',
  'REIN_MODEL',
];

/** Keys as a terminal sends them. */
export const keys = {
  enter: '\r',
  altEnter: '\x1b\r',
  ctrlQ: '\x11',
  escape: '\x1b',
  ctrlC: '\x03',
  shiftTab: '\x1b[Z',
  up: '\x1b[A',
  down: '\x1b[B',
  delete: '\x1b[3~',
  pageUp: '\x1b[5~',
  pageDown: '\x1b[6~',
  end: '\x1b[F',
  paste: (text: string): string => `\x1b[200~${text}\x1b[201~`,
} as const;

/** A cell of the emulated screen, for screenshots. */
export interface ScreenCell {
  readonly char: string;
  readonly fg: number | undefined;
  readonly bg: number | undefined;
  readonly bold: boolean;
  readonly dim: boolean;
  readonly italic: boolean;
  readonly inverse: boolean;
}

/**
 * `rein` running in a real pseudo-terminal whose output feeds a headless xterm: tests read the screen a
 * person would see, type keys, resize, and kill the process.
 */
export class TuiTerminal {
  readonly process: IPty;
  readonly term: InstanceType<typeof xterm.Terminal>;
  #exit: Promise<{ exitCode: number; signal?: number }>;
  #raw = '';

  constructor(
    args: readonly string[],
    options: { cwd: string; env: Record<string, string>; cols?: number; rows?: number },
  ) {
    const cols = options.cols ?? 100;
    const rows = options.rows ?? 30;
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
    for (const name of scrubbed) delete env[name];
    Object.assign(env, { TERM: 'xterm-256color', REIN_DEMO_DELAY_MS: '0' }, options.env);
    this.term = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 0 });
    this.process = pty!.spawn(process.execPath, [reinBin, ...args], {
      name: 'xterm-256color',
      cols,
      rows,
      cwd: options.cwd,
      env,
    });
    this.process.onData((data) => {
      this.#raw += data;
      this.term.write(data);
    });
    // The emulator answers the app's queries (device attributes, keyboard protocol) like a real terminal.
    this.term.onData((data) => this.process.write(data));
    this.#exit = new Promise((resolve) => this.process.onExit(resolve));
  }

  /** Everything the process wrote, escape codes included. */
  get raw(): string {
    return this.#raw;
  }

  /** The visible screen as text lines (trailing spaces trimmed). */
  screen(): string[] {
    const buffer = this.term.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < this.term.rows; row++) {
      lines.push(buffer.getLine(buffer.viewportY + row)?.translateToString(true) ?? '');
    }
    return lines;
  }

  /** The visible screen as one string. */
  text(): string {
    return this.screen().join('\n');
  }

  /** The cells of the visible screen, for rendering a screenshot. */
  cells(): ScreenCell[][] {
    const buffer = this.term.buffer.active;
    const grid: ScreenCell[][] = [];
    const cell = buffer.getNullCell();
    for (let row = 0; row < this.term.rows; row++) {
      const line = buffer.getLine(buffer.viewportY + row);
      const cells: ScreenCell[] = [];
      for (let col = 0; col < this.term.cols; col++) {
        line?.getCell(col, cell);
        cells.push({
          char: cell.getChars() || ' ',
          fg: cell.isFgDefault() ? undefined : cell.getFgColor(),
          bg: cell.isBgDefault() ? undefined : cell.getBgColor(),
          bold: cell.isBold() !== 0,
          dim: cell.isDim() !== 0,
          italic: cell.isItalic() !== 0,
          inverse: cell.isInverse() !== 0,
        });
      }
      grid.push(cells);
    }
    return grid;
  }

  /** Types text or keys. */
  type(text: string): void {
    this.process.write(text);
  }

  /** Resizes the pseudo-terminal and the emulator together. */
  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
    this.process.resize(cols, rows);
  }

  /**
   * Waits until the screen satisfies a predicate (a substring or a test of the text), judging only screens
   * a real terminal would show: never one read inside a synchronized update (`CSI ? 2026 h` … `l`), whose
   * frame may have reached the emulator in several pieces.
   */
  async waitFor(
    expected: string | RegExp | ((text: string) => boolean),
    timeoutMs = 30_000,
  ): Promise<string> {
    const test =
      typeof expected === 'function'
        ? expected
        : typeof expected === 'string'
          ? (text: string) => text.includes(expected)
          : (text: string) => expected.test(text);
    const started = Date.now();
    for (;;) {
      await new Promise<void>((resolve) => this.term.write('', resolve));
      const text = this.text();
      if (!this.term.modes.synchronizedOutputMode && test(text)) return text;
      if (Date.now() - started > timeoutMs) {
        throw new Error(`the screen never showed ${String(expected)}; it shows:\n${text}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Resolves when the process has exited. */
  exited(): Promise<{ exitCode: number; signal?: number }> {
    return this.#exit;
  }

  /** Kills the process (SIGKILL unless told otherwise). */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.process.kill(signal);
  }
}
