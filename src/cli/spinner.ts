import type { CliWritable } from './cli-io.ts';

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A one-line progress indicator on a terminal; does nothing when the stream is not a TTY. */
export class Spinner {
  readonly #stream: CliWritable;
  #timer: ReturnType<typeof setInterval> | undefined;
  #label: string | (() => string) = '';
  #frame = 0;
  #visible = false;

  constructor(stream: CliWritable) {
    this.#stream = stream;
  }

  /** Shows (or relabels) the spinner; a function label is read on every frame (a countdown, say). */
  start(label: string | (() => string)): void {
    if (this.#stream.isTTY !== true) return;
    this.#label = label;
    if (this.#timer !== undefined) return;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), 100);
    this.#timer.unref();
  }

  /** Hides the spinner and clears its line, so other output starts at column 0. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#visible) this.#stream.write('\r\x1b[2K');
    this.#visible = false;
  }

  #draw(): void {
    this.#frame = (this.#frame + 1) % frames.length;
    const label = typeof this.#label === 'function' ? this.#label() : this.#label;
    this.#stream.write(`\r\x1b[2K${frames[this.#frame]} ${label}`);
    this.#visible = true;
  }
}
