/** What one log scan derived from the first `events` events of a log, as a JSON value. */
export interface SavedLogScan {
  readonly events: number;
  readonly state: unknown;
}

/**
 * The saved states of a session's log scans (code that derives something from every event of some
 * types since seq 0: the inbox's queues, the compaction lookups, AGENTS.md injections). A store's
 * snapshot carries them, so that a resumed scan starts where the snapshot ends instead of at seq 0;
 * each scan checks the state it gets back and rebuilds from seq 0 when it does not fit.
 */
export class LogScanStates {
  readonly #restored: ReadonlyMap<string, SavedLogScan>;
  readonly #savers = new Map<string, () => unknown>();

  /** `restored`: the states a snapshot saved, each covering a prefix of the log no longer than `covered`. */
  constructor(restored?: Readonly<Record<string, SavedLogScan>>, covered = 0) {
    const states = new Map<string, SavedLogScan>();
    for (const [name, saved] of Object.entries(restored ?? {})) {
      if (isSavedScan(saved) && saved.events <= covered) states.set(name, saved);
    }
    this.#restored = states;
  }

  /** The state the scan `name` saved in the snapshot this session resumed from, if there is one. */
  restored(name: string): SavedLogScan | undefined {
    return this.#restored.get(name);
  }

  /**
   * Registers how the scan `name` saves its state for the next snapshot: `save` brings the scan up to
   * the whole log and returns what it derived, a JSON value (the last registration of a name wins).
   */
  register(name: string, save: () => unknown): void {
    this.#savers.set(name, save);
  }

  /**
   * The states for a snapshot of a log of `length` events: each registered scan's over the whole log,
   * and each restored state no scan registered in this session (it still covers a prefix of the log).
   * A scan whose `save` throws is left out: it rebuilds from seq 0 next time.
   */
  save(length: number): Record<string, SavedLogScan> {
    const states: Record<string, SavedLogScan> = {};
    for (const [name, saved] of this.#restored) if (!this.#savers.has(name)) states[name] = saved;
    for (const [name, save] of this.#savers) {
      try {
        states[name] = { events: length, state: save() };
      } catch {
        // A scan that cannot say what it derived (a log it cannot read) is not saved, only rebuilt later.
      }
    }
    return states;
  }
}

function isSavedScan(value: unknown): value is SavedLogScan {
  if (typeof value !== 'object' || value === null) return false;
  const events = (value as { events?: unknown }).events;
  return typeof events === 'number' && Number.isSafeInteger(events) && events >= 0 && 'state' in value;
}
