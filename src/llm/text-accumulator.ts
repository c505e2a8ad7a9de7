// How many pieces are kept before they are joined into one flat string.
const joinEvery = 256;

/**
 * Accumulates streamed text pieces into one string. Appending with `+=` builds one 32-byte rope node
 * per piece that lives until the text is flattened; this joins every 256 pieces into a flat string, so
 * a long stream keeps about its own bytes. A text of one piece allocates nothing.
 */
export class TextAccumulator {
  #single = '';
  #pieces: string[] | undefined;
  #joined: string[] | undefined;

  /** Appends one piece. */
  push(piece: string): void {
    if (piece === '') return;
    const pieces = this.#pieces;
    if (pieces === undefined) {
      if (this.#single === '') this.#single = piece;
      else this.#pieces = [this.#single, piece];
      return;
    }
    pieces.push(piece);
    if (pieces.length === joinEvery) {
      (this.#joined ??= []).push(pieces.join(''));
      this.#pieces = [];
    }
  }

  /** The text so far. */
  toString(): string {
    const pieces = this.#pieces;
    if (pieces === undefined) return this.#single;
    const joined = this.#joined;
    const whole = joined === undefined ? pieces.join('') : joined.join('') + pieces.join('');
    // Keep the joined text as the one piece, so a second call costs nothing.
    this.#single = whole;
    this.#pieces = undefined;
    this.#joined = undefined;
    return whole;
  }
}
