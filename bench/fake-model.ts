// The fake model's shared behaviour: instant replies, the same pacing for every subject, self-time accounting.
import { performance } from 'node:perf_hooks';

/** Text deltas streamed between two macrotask yields: the same paced producer feeds every subject. */
export const paceDeltas = 64;

/** Yields to the event loop (one macrotask), as a real network stream would between packets. */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** True when the producer should yield a macrotask before delta number `index` (0-based). */
export function pacedBefore(index: number): boolean {
  return index > 0 && index % paceDeltas === 0;
}

/** Accumulates the time fake models spend building their replies, so that it can be subtracted. */
export const modelClock = {
  totalMs: 0,
  requests: 0,
  /** Runs `build` (the fake model's own synchronous work) and adds its duration. */
  measure<T>(build: () => T): T {
    const start = performance.now();
    try {
      return build();
    } finally {
      this.totalMs += performance.now() - start;
    }
  },
  reset(): void {
    this.totalMs = 0;
    this.requests = 0;
  },
};
