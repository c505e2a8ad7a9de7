import type { LlmCallConfig } from '../../llm/index.ts';
import { snapshotJson } from '../../llm/index.ts';
import type { EpochHeader, Session } from '../../session/index.ts';

/** A provider/model pair. */
export interface ModelRoute {
  provider: string;
  model: string;
}

/** A logged request envelope and its canonical JSON, for equality checks. */
export interface LoggedHeader {
  readonly seq: number;
  readonly header: EpochHeader;
  readonly json: string;
}

interface LogIndex {
  scanned: number;
  headers: LoggedHeader[];
  contextWindows: Map<string, number | undefined>;
  lock: string | undefined;
}

// The log is append-only, so what these lookups need is indexed once per event, as the log grows.
const indexedTypes: ReadonlySet<string> = new Set([
  'request/header',
  'request/context',
  'compaction/start',
  'compaction/end',
  'session/end-seed',
]);
const indexes = new WeakMap<Session, LogIndex>();
// The name of this index in a session's saved scan states.
const lookupsScan = 'compaction-lookups/1';

/**
 * What the index saves for a snapshot: headers without their JSON, one equal to the header before it by
 * its seq alone (most requests of a session repeat the same system prompt and tools, several KB each,
 * and a snapshot would otherwise carry a copy per request); context windows as pairs.
 */
interface SavedLookups {
  headers: { seq: number; header?: EpochHeader }[];
  contextWindows: [string, number | null][];
  lock: string | null;
}

function indexOf(session: Session): LogIndex {
  let index = indexes.get(session);
  if (index === undefined) {
    index = restoredIndex(session) ?? { scanned: 0, headers: [], contextWindows: new Map(), lock: undefined };
    indexes.set(session, index);
    session.scans.register(lookupsScan, () => savedIndex(indexOf(session)));
  }
  const log = session.log;
  const length = log.length;
  // Types first: only the few events these lookups read are built.
  for (
    let seq = log.nextOfType(indexedTypes, index.scanned);
    seq >= 0;
    seq = log.nextOfType(indexedTypes, seq + 1)
  ) {
    const event = log.at(seq)!;
    switch (event.type) {
      case 'request/header': {
        const header = (event.data as { header: EpochHeader }).header;
        index.headers.push({ seq: event.seq, header, json: JSON.stringify(header) });
        break;
      }
      case 'request/context': {
        const data = event.data as { provider: string; model: string; contextWindow?: number };
        index.contextWindows.set(routeKey(data), data.contextWindow);
        break;
      }
      case 'compaction/start':
        index.lock = (event.data as { compactionId: string }).compactionId;
        break;
      // A compaction left open by a crash is not a lock for the live session that follows its seed.
      case 'compaction/end':
      case 'session/end-seed':
        index.lock = undefined;
        break;
      default:
        break;
    }
  }
  index.scanned = length;
  return index;
}

/** The index a snapshot saved, as of its end; undefined when there is none or it does not fit. */
function restoredIndex(session: Session): LogIndex | undefined {
  const saved = session.scans.restored(lookupsScan);
  const state = saved?.state as Partial<SavedLookups> | undefined;
  if (saved === undefined || typeof state !== 'object' || state === null) return undefined;
  const { headers, contextWindows, lock } = state;
  if (!Array.isArray(headers) || !Array.isArray(contextWindows)) return undefined;
  if (lock !== null && typeof lock !== 'string') return undefined;
  const index: LogIndex = {
    scanned: saved.events,
    headers: [],
    contextWindows: new Map(),
    lock: lock ?? undefined,
  };
  let last = -1;
  for (const entry of headers as unknown[]) {
    const { seq, header } = (entry ?? {}) as { seq?: unknown; header?: unknown };
    if (typeof seq !== 'number' || seq <= last || seq >= saved.events) return undefined;
    last = seq;
    const previous = index.headers.at(-1);
    if (header === undefined && previous !== undefined) {
      // Equal to the one before: the same frozen header and JSON serve both.
      index.headers.push({ seq, header: previous.header, json: previous.json });
      continue;
    }
    if (typeof header !== 'object' || header === null) return undefined;
    let frozen: EpochHeader;
    try {
      frozen = snapshotJson(header as EpochHeader, '$', false);
    } catch {
      // Not lossless JSON: not a header this index saved, so the log is scanned instead.
      return undefined;
    }
    index.headers.push({ seq, header: frozen, json: JSON.stringify(frozen) });
  }
  for (const pair of contextWindows as unknown[]) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string') return undefined;
    const window: unknown = pair[1];
    if (window !== null && typeof window !== 'number') return undefined;
    index.contextWindows.set(pair[0], window ?? undefined);
  }
  return index;
}

function savedIndex(index: LogIndex): SavedLookups {
  return {
    headers: index.headers.map(({ seq, header, json }, position) =>
      position > 0 && index.headers[position - 1]!.json === json ? { seq } : { seq, header },
    ),
    contextWindows: [...index.contextWindows].map(([key, window]) => [key, window ?? null]),
    lock: index.lock ?? null,
  };
}

function routeKey(route: ModelRoute): string {
  return `${route.provider}\u0000${route.model}`;
}

/** The latest logged request envelope, if any. */
export function latestRequestHeader(session: Session): EpochHeader | undefined {
  return indexOf(session).headers.at(-1)?.header;
}

/** The latest request envelope logged before `seq`, if any. */
export function requestHeaderBefore(session: Session, seq: number): LoggedHeader | undefined {
  const headers = indexOf(session).headers;
  let low = 0;
  let high = headers.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (headers[middle]!.seq < seq) low = middle + 1;
    else high = middle;
  }
  return low > 0 ? headers[low - 1] : undefined;
}

/** The capacity the latest `request/context` of this route recorded, if it recorded one. */
export function loggedContextWindow(session: Session, route: ModelRoute): number | undefined {
  return indexOf(session).contextWindows.get(routeKey(route));
}

/**
 * The route of the conversation, as the driver seeds it: the latest header this live session logged;
 * before this session logged any (a fresh or resumed agent), the agent's own route when it names one,
 * else the latest header of the seed.
 */
export function conversationRoute(
  session: Session,
  fallback: Partial<LlmCallConfig>,
): ModelRoute | undefined {
  const latest = indexOf(session).headers.at(-1);
  const config = latest?.header.config;
  const logged =
    config !== undefined && config.provider !== '' && config.model !== ''
      ? { provider: config.provider, model: config.model }
      : undefined;
  const own =
    typeof fallback.provider === 'string' &&
    fallback.provider !== '' &&
    typeof fallback.model === 'string' &&
    fallback.model !== ''
      ? { provider: fallback.provider, model: fallback.model }
      : undefined;
  if (logged !== undefined && latest!.seq >= session.firstLiveSeq) return logged;
  return own ?? logged;
}

/**
 * The id of a `compaction/start` that has no `compaction/end` and is not older than the latest
 * `session/end-seed` — the log-recorded compaction lock — or undefined when the lock is free.
 * Compactions never overlap (this lock), so the latest compaction record decides.
 */
export function openCompactionId(session: Session): string | undefined {
  return indexOf(session).lock;
}
