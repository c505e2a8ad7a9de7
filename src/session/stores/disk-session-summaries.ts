import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session } from '../session.ts';
import { SessionError } from '../session-error.ts';
import type { PricingLookup, SessionSummary } from '../session-store.ts';
import { priceTally, tallySession } from '../session-summary.ts';
import type { SessionTally } from '../session-summary.ts';
import type { SessionLogFormat } from './session-log-format.ts';
import { parseSessionLog } from './session-log-format.ts';
import type { SessionSnapshotFiles } from './session-snapshot.ts';
import { SessionSummaryCache } from './session-summary-cache.ts';
import { ioError, isCode } from './session-io-error.ts';
import { tallyFromSnapshot } from './stored-log-read.ts';

/**
 * The listing rows of a disk store's session files, kept in memory and in the durable summary cache
 * against each file's size and mtime; a file that has neither is tallied from its snapshot, else in full.
 */
export class DiskSessionSummaries {
  readonly #root: string;
  readonly #pricing: PricingLookup | undefined;
  readonly #snapshots: SessionSnapshotFiles;
  readonly #readLog: (id: string, path: string) => Promise<Buffer>;
  readonly #summaries = new Map<string, { size: number; modified: number; summary: SessionSummary }>();
  readonly #summaryCache: SessionSummaryCache;

  constructor(options: {
    root: string;
    pricing: PricingLookup | undefined;
    snapshots: SessionSnapshotFiles;
    /** Reads a session's file; a missing one is SessionError `SESSION_NOT_FOUND`. */
    readLog: (id: string, path: string) => Promise<Buffer>;
  }) {
    this.#root = options.root;
    this.#summaryCache = new SessionSummaryCache(options.root);
    this.#pricing = options.pricing;
    this.#snapshots = options.snapshots;
    this.#readLog = options.readLog;
  }

  /**
   * The listing row of a session's file as it stands; undefined for a vanished or foreign file or a
   * newer format (`read` reports why).
   */
  async summaryOf(id: string): Promise<SessionSummary | undefined> {
    const path = join(this.#root, `${id}.jsonl`);
    try {
      const info = await stat(path);
      const cached = this.#summaries.get(id);
      if (cached !== undefined && cached.size === info.size && cached.modified === info.mtimeMs) {
        return cached.summary;
      }
      const stamp = { size: info.size, mtimeMs: info.mtimeMs };
      const durable = await this.#summaryCache.get(id, stamp);
      let summary: SessionSummary;
      if (durable !== undefined) {
        summary = priceTally(durable.tally, this.#pricing);
        if (durable.corrupt !== undefined) summary.corrupt = durable.corrupt;
      } else {
        // A file whose listing row is not cached (written elsewhere, or copied) tallies from its snapshot.
        const bytes = await this.#readLog(id, path);
        const fromSnapshot = await tallyFromSnapshot(bytes, () => this.#snapshots.read(id), { id, path });
        if (fromSnapshot !== undefined) {
          summary = priceTally(fromSnapshot.tally, this.#pricing);
          await this.#summaryCache.put(id, stamp, fromSnapshot);
          this.#summaries.set(id, { size: info.size, modified: info.mtimeMs, summary });
          return summary;
        }
        const parsed = parseSessionLog(bytes, { id, path, salvage: true });
        const tally = tallySession(parsed.header, parsed.events);
        summary = priceTally(tally, this.#pricing);
        const corrupt =
          parsed.corrupt === undefined
            ? undefined
            : { line: parsed.corrupt.line, offset: parsed.corrupt.offset };
        if (corrupt !== undefined) summary.corrupt = corrupt;
        await this.#summaryCache.put(
          id,
          stamp,
          corrupt === undefined
            ? { format: parsed.format, tally }
            : { format: parsed.format, tally, corrupt },
        );
      }
      this.#summaries.set(id, { size: info.size, modified: info.mtimeMs, summary });
      return summary;
    } catch (error) {
      // A vanished file (gone since the directory was read), a foreign file or a newer format has no
      // row; `read` reports why. Any other failure to look at the file is SESSION_IO naming it.
      if (error instanceof SessionError || isCode(error, 'ENOENT')) return undefined;
      throw ioError(path, error);
    }
  }

  /** Caches the tally of a released session's complete log against its file as it stands (best effort). */
  async cacheTally(session: Session, format: SessionLogFormat, tally: SessionTally): Promise<void> {
    let info: { size: number; mtimeMs: number };
    try {
      info = await stat(join(this.#root, `${session.id}.jsonl`));
    } catch {
      // The file went away (deleted by hand): there is nothing to cache.
      return;
    }
    const stamp = { size: info.size, mtimeMs: info.mtimeMs };
    await this.#summaryCache.put(session.id, stamp, { format, tally });
  }

  /** Forgets the row of a deleted session, in memory and in the durable cache. */
  async remove(id: string): Promise<void> {
    this.#summaries.delete(id);
    await this.#summaryCache.remove(id);
  }
}
