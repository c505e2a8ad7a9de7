/** What a run's deltas of one block index built so far. */
export interface BlockBuild {
  kind: 'text' | 'reasoning' | 'tool-call';
  text: string;
  id: unknown;
  name: unknown;
}

// How many open blocks are searched in place before a Map takes over (a tool loop has one at a time).
const inPlaceBuilds = 8;

/**
 * The builds of a chunk run's open blocks by block index, with a Map's `get`, `set`, `delete` and
 * `clear`. A few are kept in reused slots and searched in place: deleting a Map's last entry makes V8
 * shrink its table (a runtime call and a new table), which every block end of every step would pay.
 * Past `inPlaceBuilds` open blocks they move to a Map, so many open blocks cost no quadratic search.
 */
export class BlockBuilds {
  readonly #indexes: number[] = [];
  readonly #builds: (BlockBuild | undefined)[] = [];
  #count = 0;
  #map: Map<number, BlockBuild> | undefined;

  /** How many blocks have a build. */
  get size(): number {
    return this.#map === undefined ? this.#count : this.#map.size;
  }

  /** The build of block `index`, if it has one. */
  get(index: number): BlockBuild | undefined {
    if (this.#map !== undefined) return this.#map.get(index);
    const indexes = this.#indexes;
    for (let slot = 0; slot < this.#count; slot++) if (indexes[slot] === index) return this.#builds[slot];
    return undefined;
  }

  /** Gives block `index` the build `build` (replacing any it had). */
  set(index: number, build: BlockBuild): void {
    if (this.#map !== undefined) {
      this.#map.set(index, build);
      return;
    }
    const indexes = this.#indexes;
    for (let slot = 0; slot < this.#count; slot++)
      if (indexes[slot] === index) {
        this.#builds[slot] = build;
        return;
      }
    if (this.#count < inPlaceBuilds) {
      indexes[this.#count] = index;
      this.#builds[this.#count++] = build;
      return;
    }
    const map = new Map<number, BlockBuild>();
    for (let slot = 0; slot < this.#count; slot++) map.set(indexes[slot]!, this.#builds[slot]!);
    map.set(index, build);
    this.#empty();
    this.#map = map;
  }

  /** Removes the build of block `index`, if it has one. */
  delete(index: number): void {
    if (this.#map !== undefined) {
      this.#map.delete(index);
      return;
    }
    const indexes = this.#indexes;
    const last = this.#count - 1;
    for (let slot = 0; slot <= last; slot++)
      if (indexes[slot] === index) {
        // The last build fills the hole: the order of the builds is never read.
        indexes[slot] = indexes[last]!;
        this.#builds[slot] = this.#builds[last];
        this.#builds[last] = undefined;
        this.#count = last;
        return;
      }
  }

  /** Removes every build (and goes back to searching in place). */
  clear(): void {
    this.#empty();
    this.#map = undefined;
  }

  #empty(): void {
    for (let slot = 0; slot < this.#count; slot++) this.#builds[slot] = undefined;
    this.#count = 0;
  }
}
