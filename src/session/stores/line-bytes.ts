import { needsEscape } from './compact-log-state.ts';

// Texts this short are written a character at a time; longer ones go through `Buffer.write`, whose
// native call costs more than the loop for a short text and less for a long one.
const shortText = 64;

const quote = 0x22;
const backslash = 0x5c;
const minus = 0x2d;
const zero = 0x30;

/**
 * The UTF-8 bytes of a run of log lines, written straight into one growable buffer: a line's parts
 * (its kind, numbers, JSON strings) are never joined into a string first, so a batch of lines costs no
 * string allocation and no join. Every write produces exactly the bytes of the UTF-8 encoding of what a
 * template literal of the same parts would give.
 */
export class LineBytes {
  #buffer: Buffer | undefined;
  #length = 0;
  readonly #keepBytes: number;
  readonly #initialBytes: number;

  /**
   * `keepBytes`: above this capacity `clear` lets the buffer go, so one large batch is not kept;
   * `initialBytes`: the smallest buffer allocated when room is first needed.
   */
  constructor(keepBytes = 1 << 14, initialBytes = 4096) {
    this.#keepBytes = keepBytes;
    this.#initialBytes = initialBytes;
  }

  /** The number of bytes written since the last `clear`. */
  get length(): number {
    return this.#length;
  }

  /** The bytes written since the last `clear` (a view, valid until the next write or `clear`). */
  bytes(): Buffer {
    return this.#buffer === undefined ? Buffer.alloc(0) : this.#buffer.subarray(0, this.#length);
  }

  /** The text of the bytes from `start` (0 by default) to the end. */
  text(start = 0): string {
    return this.#buffer === undefined ? '' : this.#buffer.toString('utf8', start, this.#length);
  }

  /** Forgets every byte written (the buffer is kept for reuse unless it grew past `keepBytes`). */
  clear(): void {
    this.#length = 0;
    if (this.#buffer !== undefined && this.#buffer.length > this.#keepBytes) this.#buffer = undefined;
  }

  /** Forgets the bytes written after the first `length` ones. */
  truncate(length: number): void {
    if (length < this.#length) this.#length = length;
  }

  /** Writes one ASCII character by its code. */
  byte(code: number): void {
    const buffer = this.#room(1);
    buffer[this.#length++] = code;
  }

  /** Writes `text` as UTF-8 (any text; an ASCII one a character at a time when it is short). */
  raw(text: string): void {
    const length = text.length;
    if (length <= shortText) {
      const buffer = this.#room(length);
      const start = this.#length;
      for (let index = 0; index < length; index++) {
        const code = text.charCodeAt(index);
        if (code >= 0x80) return this.#native(text, start);
        buffer[start + index] = code;
      }
      this.#length = start + length;
      return;
    }
    this.#native(text, this.#length);
  }

  /** Writes the JSON of `text`, exactly `JSON.stringify(text)`. */
  json(text: string): void {
    const length = text.length;
    if (length <= shortText) {
      const buffer = this.#room(length + 2);
      const start = this.#length;
      buffer[start] = quote;
      for (let index = 0; index < length; index++) {
        const code = text.charCodeAt(index);
        // Anything JSON escapes, and anything that is not ASCII, goes the general way.
        if (code < 0x20 || code >= 0x80 || code === quote || code === backslash) {
          this.#length = start;
          return this.raw(JSON.stringify(text));
        }
        buffer[start + 1 + index] = code;
      }
      buffer[start + 1 + length] = quote;
      this.#length = start + length + 2;
      return;
    }
    if (needsEscape(text)) return this.raw(JSON.stringify(text));
    this.byte(quote);
    this.#native(text, this.#length);
    this.byte(quote);
  }

  /**
   * Writes `prefix` (ASCII, at most 64 characters), then `value` as `number` writes it, then `after`
   * (an ASCII character code): the head of a compact line in one call.
   */
  head(prefix: string, value: number, after: number): void {
    const length = prefix.length;
    const buffer = this.#room(length + 2);
    const start = this.#length;
    for (let index = 0; index < length; index++) buffer[start + index] = prefix.charCodeAt(index);
    if (value >= 0 && value < 10 && Number.isInteger(value)) {
      buffer[start + length] = zero + value;
      buffer[start + length + 1] = after;
      this.#length = start + length + 2;
      return;
    }
    this.#length = start + length;
    this.number(value);
    this.byte(after);
  }

  /** Writes `value` as a template literal or `JSON.stringify` writes a finite number. */
  number(value: number): void {
    // Most numbers in a line are small counts and time deltas: one digit.
    if (value >= 0 && value < 10 && Number.isInteger(value)) return this.byte(zero + value);
    if (!Number.isSafeInteger(value)) return this.raw(String(value));
    let rest = value;
    if (rest < 0) {
      this.byte(minus);
      rest = -rest;
    }
    let digits = 1;
    for (let power = 10; power <= rest; power *= 10) digits++;
    const buffer = this.#room(digits);
    const end = this.#length + digits;
    for (let position = end - 1; position >= this.#length; position--) {
      buffer[position] = zero + (rest % 10);
      rest = Math.floor(rest / 10);
    }
    this.#length = end;
  }

  // Writes `text` from byte `start` through Buffer's native encoder (whatever was written after `start`
  // is replaced).
  #native(text: string, start: number): void {
    this.#length = start;
    const buffer = this.#room(text.length * 3);
    this.#length = start + buffer.write(text, start);
  }

  // The buffer, with room for `bytes` more after the written ones.
  #room(bytes: number): Buffer {
    const buffer = this.#buffer;
    const needed = this.#length + bytes;
    if (buffer !== undefined && needed <= buffer.length) return buffer;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.#initialBytes, needed, (buffer?.length ?? 0) * 2));
    if (buffer !== undefined) buffer.copy(grown, 0, 0, this.#length);
    this.#buffer = grown;
    return grown;
  }
}
