import type { AnySessionEvent, ReadonlySessionLog, SavedLogScan, TranscriptCarry } from '../index.ts';
import { Transcript, defaultRecordViews } from '../index.ts';
import { restoredTranscriptCarries } from '../internal.ts';
import { HttpError } from './http-error.ts';
import { settledHistory } from './settled-history.ts';

/** One page of a session's history: the last turns before a point, with what the fold needs before them. */
export interface HistoryPage {
  /** The settled events of `[start, end)` (see `settledHistory`). */
  readonly events: AnySessionEvent[];
  /** The transcript fold of the events before `start`, to go on from. */
  readonly carry: TranscriptCarry;
  /** The seq of the page's first event: a turn boundary (or 0). */
  readonly start: number;
  /** The seq after the page's last event. */
  readonly end: number;
}

/** What `?tail=<events>[&before=<seq>]` asks for. */
export interface HistoryPageRequest {
  readonly tail: number;
  readonly before: number | undefined;
}

/**
 * Reads `tail` and `before` from a history URL: undefined without `tail`; a typed 400
 * (`INVALID_HISTORY_PAGE`) for a `tail` that is not a positive integer, a `before` that is not a log
 * position, `before` without `tail`, or `tail` together with `from` or `settled`.
 */
export function historyPageRequest(url: URL): HistoryPageRequest | undefined {
  const tail = url.searchParams.get('tail');
  const before = url.searchParams.get('before');
  if (tail === null) {
    if (before !== null) throw invalid('before needs tail');
    return undefined;
  }
  if (url.searchParams.has('from') || url.searchParams.has('settled')) {
    throw invalid('tail pages are settled and start at a turn boundary: leave out from and settled');
  }
  const count = Number(tail);
  if (tail === '' || !Number.isSafeInteger(count) || count < 1) {
    throw invalid(`tail must be a positive number of events, not '${tail}'`);
  }
  const end = before !== null && before !== '' ? Number(before) : undefined;
  if (before !== null && (end === undefined || !Number.isSafeInteger(end) || end < 0)) {
    throw invalid(`before must be a log position, not '${before}'`);
  }
  return { tail: count, before: end };
}

/** A session log as the hub holds it: the live log or the stored events. */
export type HistoryLog = Pick<ReadonlySessionLog, 'length' | 'at' | 'slice'> &
  Partial<Pick<ReadonlySessionLog, 'typeAt'>>;

// Carries at the turn boundaries a log's pages were cut at or passed over, per log object (a live log
// only grows and a stored one is read once, so a prefix's fold never changes): paging back, and opening
// again, fold only what no cached boundary covers.
const boundaryCarries = new WeakMap<HistoryLog, { seqs: number[]; carries: Map<number, TranscriptCarry> }>();

/**
 * The page of `log` that ends before `before` (the log's end when absent) and starts at the latest turn
 * boundary (0, or just after a `turn/end`) that leaves at least `tail` events in it, or at 0. Its carry
 * is the fold of everything before it with the default record views, the views the Web UI folds with.
 * A `before` past the log's end is a typed 400 (`INVALID_HISTORY_PAGE`). `saved` is what the store
 * saved of the transcript carries scan for this log (see `saveTranscriptCarries`): the first page of a
 * log folds on from the nearest of its carries that fit, instead of from seq 0.
 */
export function historyPage(log: HistoryLog, request: HistoryPageRequest, saved?: SavedLogScan): HistoryPage {
  const end = request.before ?? log.length;
  if (end > log.length) throw invalid(`before ${end} is past the end of the log (${log.length} events)`);
  let start = 0;
  for (let index = end - request.tail - 1; index >= 0; index--) {
    if ((log.typeAt?.(index) ?? log.at(index)!.type) === 'turn/end') {
      start = index + 1;
      break;
    }
  }
  return { events: settledHistory(log.slice(start, end)), carry: carryAt(log, start, saved), start, end };
}

/** The carry of `log` before `seq` (a turn boundary), folded on from the nearest cached boundary before it. */
function carryAt(log: HistoryLog, seq: number, saved: SavedLogScan | undefined): TranscriptCarry {
  let cache = boundaryCarries.get(log);
  if (cache === undefined) {
    cache = { seqs: [0], carries: new Map([[0, new Transcript({ views: defaultRecordViews }).carry()]]) };
    // Carries the store saved with the log: checked for version, views and shape; each one the fold of
    // the log's first `seq` events (the store's snapshot ties them to those events' bytes).
    for (const carry of restoredTranscriptCarries(saved, defaultRecordViews, log.length)) {
      if (cache.carries.has(carry.seq)) continue;
      cache.carries.set(carry.seq, carry);
      cache.seqs.push(carry.seq);
    }
    boundaryCarries.set(log, cache);
  }
  const cached = cache.carries.get(seq);
  if (cached !== undefined) return cached;
  const from = cache.seqs.findLast((boundary) => boundary < seq)!;
  const fold = new Transcript({ views: defaultRecordViews, carry: cache.carries.get(from)! });
  const found: number[] = [];
  for (let index = from; index < seq; index++) {
    const event = log.at(index)!;
    fold.apply(event);
    if (event.type !== 'turn/end' || index + 1 === seq || cache.carries.has(index + 1)) continue;
    cache.carries.set(index + 1, fold.carry());
    found.push(index + 1);
  }
  const carry = fold.carry();
  cache.carries.set(seq, carry);
  cache.seqs = [...cache.seqs, ...found, seq].sort((left, right) => left - right);
  return carry;
}

function invalid(message: string): HttpError {
  return new HttpError(400, 'INVALID_HISTORY_PAGE', message);
}
