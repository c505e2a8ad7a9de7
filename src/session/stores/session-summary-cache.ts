import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionTally } from '../session-summary.ts';
import type { SessionLogFormat } from './session-log-format.ts';
import { compactLogFormat, fullEnvelopeFormat } from './session-log-format.ts';

/** What a cached tally was computed from: the log file's size and modification time. */
export interface LogFileStamp {
  size: number;
  mtimeMs: number;
}

/** A cached tally, with where the log stopped being readable when it was computed. */
export interface CachedTally {
  /** The log's file format: an entry for a format this Rein does not read is ignored. */
  format: SessionLogFormat;
  tally: SessionTally;
  corrupt?: { line: number; offset: number };
}

interface CacheRecord extends CachedTally {
  version: 1;
  size: number;
  mtimeMs: number;
}

/**
 * The disk store's durable listing cache: one small JSON file per session under `<root>/.summaries`,
 * holding the unpriced tally of its log and the log file's size and mtime when it was made. An entry
 * whose stamp does not match the file (appended, truncated, replaced) is ignored, so listing a long
 * session that did not change reads a few hundred bytes instead of parsing the whole log. The cache is
 * an optimisation only: a missing, unreadable or unwritable entry means the log is read in full.
 */
export class SessionSummaryCache {
  readonly #directory: string;

  constructor(root: string) {
    this.#directory = join(root, '.summaries');
  }

  /** The cached tally of a session whose log file still has `stamp`, if there is one. */
  async get(id: string, stamp: LogFileStamp): Promise<CachedTally | undefined> {
    let record: CacheRecord;
    try {
      record = JSON.parse(await readFile(this.#pathOf(id), 'utf8')) as CacheRecord;
    } catch {
      // No entry yet, or one cut short: the caller reads the log.
      return undefined;
    }
    if (
      typeof record !== 'object' ||
      record === null ||
      record.version !== 1 ||
      record.size !== stamp.size ||
      record.mtimeMs !== stamp.mtimeMs
    )
      return undefined;
    if (typeof record.tally !== 'object' || record.tally === null || record.tally.summary?.id !== id)
      return undefined;
    if (record.format !== fullEnvelopeFormat && record.format !== compactLogFormat) return undefined;
    const cached: CachedTally = { format: record.format, tally: record.tally };
    if (record.corrupt !== undefined) cached.corrupt = record.corrupt;
    return cached;
  }

  /** Stores a session's tally for a log file with `stamp` (best effort: a failure leaves no entry). */
  async put(id: string, stamp: LogFileStamp, cached: CachedTally): Promise<void> {
    const record: CacheRecord = { version: 1, size: stamp.size, mtimeMs: stamp.mtimeMs, ...cached };
    const path = this.#pathOf(id);
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      await mkdir(this.#directory, { recursive: true, mode: 0o700 });
      await writeFile(temporary, JSON.stringify(record), { mode: 0o600 });
      // A rename replaces the entry whole: a reader sees the old entry or the new one.
      await rename(temporary, path);
    } catch {
      // A read-only or full disk: listings read the log instead. The temporary file may be left over.
      await unlink(temporary).catch(() => {
        // It was never created.
      });
    }
  }

  /** Drops a session's entry (when the session is deleted). */
  async remove(id: string): Promise<void> {
    await unlink(this.#pathOf(id)).catch(() => {
      // There was no entry.
    });
  }

  #pathOf(id: string): string {
    return join(this.#directory, `${id}.json`);
  }
}
