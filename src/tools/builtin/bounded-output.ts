import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The cap of what one tool result may show the model. */
export interface OutputLimit {
  /** The most bytes (UTF-8) of output a result shows; 30 000 by default. */
  maxBytes?: number;
}

/** The default cap of a tool result's output, in bytes. */
export const defaultOutputMaxBytes = 30_000;

/** The smallest cap accepted: room for a head, a tail and the omission notice. */
export const minimumOutputMaxBytes = 1_000;

/** Bounded output: what the model sees, and the exact facts of what was left out. */
export interface BoundedOutput {
  /** The text to show: the whole output, or its head and tail around an omission notice. */
  readonly text: string;
  readonly totalBytes: number;
  /** Lines of the whole output (a last line without a newline counts). */
  readonly totalLines: number;
  /** Bytes left out of `text` (0 when nothing was). */
  readonly omittedBytes: number;
  /** Newline characters inside the omitted middle (the number of omitted lines when the cut fell on line ends). */
  readonly omittedLines: number;
  /** The private file (mode 0600) holding the whole output byte for byte, when anything was omitted. */
  readonly spillPath?: string;
  /** Why the whole output could not be saved, if saving failed. */
  readonly spillError?: string;
}

const newline = 0x0a;

function countNewlines(buffer: Buffer): number {
  let count = 0;
  let index = buffer.indexOf(newline);
  while (index !== -1) {
    count++;
    index = buffer.indexOf(newline, index + 1);
  }
  return count;
}

/** Moves `end` back so that `buffer.subarray(0, end)` does not split a UTF-8 sequence. */
function utf8FloorEnd(buffer: Buffer, end: number): number {
  let cut = end;
  // Walk back over continuation bytes to the lead byte; drop it if its sequence does not fit.
  let back = 0;
  while (cut - back - 1 >= 0 && back < 4 && ((buffer[cut - back - 1] ?? 0) & 0xc0) === 0x80) back++;
  const leadIndex = cut - back - 1;
  if (leadIndex < 0) return cut;
  const lead = buffer[leadIndex] ?? 0;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (length > back + 1) cut = leadIndex;
  return cut;
}

/** Moves `start` forward past continuation bytes so the slice starts on a character. */
function utf8CeilStart(buffer: Buffer, start: number): number {
  let cut = start;
  while (cut < buffer.length && cut - start < 4 && ((buffer[cut] ?? 0) & 0xc0) === 0x80) cut++;
  return cut;
}

/**
 * Collects a stream of output within a byte cap without holding it all: it keeps the first bytes and a
 * rolling tail, counts bytes and lines exactly, and once the cap is passed writes everything to a
 * private spill file (mode 0600) in `directory`.
 */
export class OutputCollector {
  readonly #maxBytes: number;
  readonly #headBudget: number;
  readonly #tailBudget: number;
  readonly #directory: string;
  #initial: Buffer[] = [];
  #initialBytes = 0;
  #head: Buffer | undefined;
  #tail: Buffer = Buffer.alloc(0);
  #totalBytes = 0;
  #totalNewlines = 0;
  #lastByte = -1;
  #spillFd: number | undefined;
  #spillPath: string | undefined;
  #spillError: string | undefined;
  #finished = false;

  constructor(options: { directory: string; limit?: OutputLimit }) {
    const maxBytes = options.limit?.maxBytes ?? defaultOutputMaxBytes;
    this.#maxBytes = Math.max(minimumOutputMaxBytes, Math.floor(maxBytes));
    // Room for the omission notice comes off the top; the tail gets more, since errors tend to end output.
    const budget = this.#maxBytes - 400;
    this.#headBudget = Math.floor(budget * 0.4);
    this.#tailBudget = budget - this.#headBudget;
    this.#directory = options.directory;
  }

  /** Bytes seen so far. */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /** Adds a chunk of output. */
  push(chunk: Buffer | string): void {
    if (this.#finished) return;
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (buffer.length === 0) return;
    this.#totalBytes += buffer.length;
    this.#totalNewlines += countNewlines(buffer);
    this.#lastByte = buffer[buffer.length - 1] ?? -1;
    if (this.#head === undefined) {
      this.#initial.push(buffer);
      this.#initialBytes += buffer.length;
      if (this.#initialBytes <= this.#maxBytes) return;
      // The cap is passed: keep the head, start the rolling tail, and spill everything seen so far.
      const all = Buffer.concat(this.#initial);
      this.#initial = [];
      this.#head = Buffer.from(all.subarray(0, this.#headBudget));
      this.#tail = Buffer.from(all.subarray(Math.max(0, all.length - this.#tailBudget)));
      this.#openSpill();
      this.#spill(all);
      return;
    }
    this.#spill(buffer);
    if (buffer.length >= this.#tailBudget) {
      this.#tail = Buffer.from(buffer.subarray(buffer.length - this.#tailBudget));
    } else {
      const keep = this.#tailBudget - buffer.length;
      this.#tail = Buffer.concat([this.#tail.subarray(Math.max(0, this.#tail.length - keep)), buffer]);
    }
  }

  /** Ends collection and returns the bounded view (the spill file, if any, is complete and closed). */
  finish(): BoundedOutput {
    this.#finished = true;
    if (this.#spillFd !== undefined) {
      try {
        closeSync(this.#spillFd);
      } catch (error) {
        this.#spillError ??= `closing the output file failed: ${String(error)}`;
      }
      this.#spillFd = undefined;
    }
    const totalLines = this.#totalNewlines + (this.#totalBytes > 0 && this.#lastByte !== newline ? 1 : 0);
    if (this.#head === undefined) {
      return {
        text: Buffer.concat(this.#initial).toString('utf8'),
        totalBytes: this.#totalBytes,
        totalLines,
        omittedBytes: 0,
        omittedLines: 0,
      };
    }
    const head = this.#cutHead(this.#head);
    const tail = this.#cutTail(this.#tail);
    const omittedBytes = this.#totalBytes - head.length - tail.length;
    const omittedLines = this.#totalNewlines - countNewlines(head) - countNewlines(tail);
    const where =
      this.#spillPath !== undefined && this.#spillError === undefined
        ? `the full output is saved in ${this.#spillPath}`
        : `the full output could not be saved (${this.#spillError ?? 'unknown error'})`;
    const headText = head.toString('utf8');
    // The notice always starts on a line of its own, after a newline that belongs to neither head nor tail.
    const notice =
      `\n[... ${omittedBytes} bytes omitted (${omittedLines} lines) of ${this.#totalBytes} bytes ` +
      `(${totalLines} lines); ${where} ...]\n`;
    const result: {
      text: string;
      totalBytes: number;
      totalLines: number;
      omittedBytes: number;
      omittedLines: number;
      spillPath?: string;
      spillError?: string;
    } = {
      text: headText + notice + tail.toString('utf8'),
      totalBytes: this.#totalBytes,
      totalLines,
      omittedBytes,
      omittedLines,
    };
    if (this.#spillPath !== undefined && this.#spillError === undefined) result.spillPath = this.#spillPath;
    if (this.#spillError !== undefined) result.spillError = this.#spillError;
    return result;
  }

  // The head ends on a line end when it holds one, else on a character boundary.
  #cutHead(head: Buffer): Buffer {
    const lastNewline = head.lastIndexOf(newline);
    if (lastNewline !== -1) return head.subarray(0, lastNewline + 1);
    return head.subarray(0, utf8FloorEnd(head, head.length));
  }

  // The tail starts on a line start when a newline precedes its last line, else on a character boundary.
  #cutTail(tail: Buffer): Buffer {
    const firstNewline = tail.indexOf(newline);
    if (firstNewline !== -1 && firstNewline < tail.length - 1) return tail.subarray(firstNewline + 1);
    return tail.subarray(utf8CeilStart(tail, 0));
  }

  #openSpill(): void {
    try {
      mkdirSync(this.#directory, { recursive: true, mode: 0o700 });
      const path = join(this.#directory, `${Date.now()}-${randomBytes(6).toString('hex')}.txt`);
      const fd = openSync(path, 'wx', 0o600);
      fchmodSync(fd, 0o600);
      this.#spillFd = fd;
      this.#spillPath = path;
    } catch (error) {
      this.#spillError = `creating the output file failed: ${(error as Error).message}`;
    }
  }

  #spill(buffer: Buffer): void {
    if (this.#spillFd === undefined) return;
    try {
      let written = 0;
      while (written < buffer.length) written += writeSync(this.#spillFd, buffer, written);
    } catch (error) {
      this.#spillError = `writing the output file failed: ${(error as Error).message}`;
      try {
        closeSync(this.#spillFd);
      } catch {
        // The descriptor is unusable anyway; the write error above is what gets reported.
      }
      this.#spillFd = undefined;
    }
  }
}

/** Bounds one finished text the way `OutputCollector` bounds a stream. */
export function boundText(text: string, options: { directory: string; limit?: OutputLimit }): BoundedOutput {
  const collector = new OutputCollector(options);
  collector.push(text);
  return collector.finish();
}
