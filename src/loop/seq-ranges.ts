/**
 * Collects increasing seqs as runs of consecutive numbers, so the chunk seqs of a long stream cost a
 * few numbers until `toArray` builds the one array the message cites.
 */
export class SeqRanges {
  // Flat pairs: start of a run, then its last seq.
  readonly #runs: number[] = [];
  #count = 0;

  /** Adds a seq greater than every seq added before. */
  push(seq: number): void {
    const runs = this.#runs;
    const last = runs.length - 1;
    if (last > 0 && runs[last] === seq - 1) runs[last] = seq;
    else runs.push(seq, seq);
    this.#count++;
  }

  /** Every seq added, in order, as a fresh array of exactly that length. */
  toArray(): number[] {
    const seqs = new Array<number>(this.#count);
    const runs = this.#runs;
    let position = 0;
    for (let run = 0; run < runs.length; run += 2)
      for (let seq = runs[run]!; seq <= runs[run + 1]!; seq++) seqs[position++] = seq;
    return seqs;
  }
}
