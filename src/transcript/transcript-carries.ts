import type { LogScanStates, ReadonlySessionLog, RecordView, SavedLogScan } from '../session/index.ts';
import { Transcript } from './transcript.ts';
import type { TranscriptCarry } from './transcript-carry.ts';

/** The name of the log scan whose saved state is the transcript carries at points of the log. */
export const transcriptCarriesScan = 'transcript/carries';

// Bumped whenever the fold's result for the same events changes: an older state is then ignored.
const carriesVersion = 1;
// A carry is recorded at a turn end at least this many events after the one recorded before it.
const carrySpacing = 1024;
// The number of carries kept: enough for a geometric ladder back from the end of a very long log.
const maxCarries = 24;

/** The saved state of the transcript carries scan. */
interface SavedCarries {
  readonly version: typeof carriesVersion;
  /** The names of the record views the carries were folded with, in order. */
  readonly views: readonly string[];
  /** Carries at turn boundaries (and the log's end when saved), by ascending seq. */
  readonly carries: readonly TranscriptCarry[];
}

/**
 * Registers the transcript carries scan on a session: when its snapshot is saved, the log is folded with
 * `views` from the latest carry the session resumed with (or seq 0) to its end, and a ladder of carries
 * (dense near the end, sparser back from it) is saved, so that a reader of a long stored log folds only
 * from the carry nearest before the events it shows.
 */
export function saveTranscriptCarries(
  session: { readonly log: ReadonlySessionLog; readonly scans: LogScanStates },
  views: readonly RecordView[],
): void {
  session.scans.register(transcriptCarriesScan, (): SavedCarries => {
    const log = session.log;
    const known = restoredTranscriptCarries(session.scans.restored(transcriptCarriesScan), views, log.length);
    const latest = known.at(-1);
    const fold = new Transcript(latest === undefined ? { views } : { views, carry: latest });
    const carries = [...known];
    let recorded = latest?.seq ?? 0;
    for (let seq = latest?.seq ?? 0; seq < log.length; seq++) {
      const event = log.at(seq)!;
      fold.apply(event);
      if (event.type === 'turn/end' && seq + 1 - recorded >= carrySpacing && seq + 1 < log.length) {
        carries.push(fold.carry());
        recorded = seq + 1;
      }
    }
    if (latest?.seq !== log.length) carries.push(fold.carry());
    return { version: carriesVersion, views: views.map((view) => view.name), carries: ladder(carries) };
  });
}

/**
 * The carries a saved transcript carries scan holds for a log of `length` events folded with `views`,
 * by ascending seq; none when the state is of another version, folded with other views, or not shaped
 * as carries, and never one past `length` or past what the state covers.
 */
export function restoredTranscriptCarries(
  saved: SavedLogScan | undefined,
  views: readonly RecordView[],
  length: number,
): TranscriptCarry[] {
  if (saved === undefined) return [];
  const state = saved.state as Partial<SavedCarries> | null;
  if (typeof state !== 'object' || state === null || state.version !== carriesVersion) return [];
  const names = views.map((view) => view.name);
  if (
    !Array.isArray(state.views) ||
    state.views.length !== names.length ||
    state.views.some((name, index) => name !== names[index]) ||
    !Array.isArray(state.carries)
  )
    return [];
  const carries: TranscriptCarry[] = [];
  for (const carry of state.carries as unknown[]) {
    if (!isCarry(carry, names)) return [];
    if (carry.seq > saved.events || carry.seq > length) break;
    if (carries.length > 0 && carry.seq <= carries.at(-1)!.seq) return [];
    carries.push(carry);
  }
  return carries;
}

/**
 * The carries to keep: the newest, then back from it each one at least half as far from the one kept
 * after it as that one is from the end (a log of n events keeps about log1.5(n / spacing) of them).
 */
function ladder(carries: readonly TranscriptCarry[]): TranscriptCarry[] {
  const end = carries.at(-1)!.seq;
  const kept = [carries.at(-1)!];
  for (let index = carries.length - 2; index >= 0 && kept.length < maxCarries; index--) {
    const carry = carries[index]!;
    const after = kept.at(-1)!.seq;
    if (after - carry.seq >= Math.max(carrySpacing, (end - after) / 2)) kept.push(carry);
  }
  return kept.reverse();
}

function isCarry(value: unknown, views: readonly string[]): value is TranscriptCarry {
  if (typeof value !== 'object' || value === null) return false;
  const carry = value as Partial<TranscriptCarry>;
  return (
    typeof carry.seq === 'number' &&
    Number.isSafeInteger(carry.seq) &&
    carry.seq >= 0 &&
    typeof carry.activity === 'object' &&
    carry.activity !== null &&
    typeof carry.states === 'object' &&
    carry.states !== null &&
    Object.keys(carry.states).every((name) => views.includes(name)) &&
    typeof carry.usage === 'object' &&
    carry.usage !== null &&
    Array.isArray(carry.open) &&
    Array.isArray(carry.unsettled) &&
    Array.isArray(carry.streams)
  );
}
