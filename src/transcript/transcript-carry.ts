import type {
  AssistantItem,
  CompactionItem,
  ToolCard,
  TranscriptActivity,
  TranscriptItem,
} from './transcript-item.ts';
import type { UsageCarry } from './turn-usage-ledger.ts';

/**
 * What the transcript fold needs to go on from a point in the log without the events before it: the
 * seq to go on from, turn state, todos, activity, record views' states (by view name), the session's
 * running usage per model (so cost comes out exactly as a whole fold prices it), and the items later
 * events may still change (the open turn's tool cards, unsettled cards, streaming answers, running
 * compactions). Plain JSON: a server sends it with a page of the log (`Transcript.carry()`, then
 * `new Transcript({ carry })`).
 */
export interface TranscriptCarry {
  /** The first seq the continuing fold applies (the events before it are folded into this carry). */
  readonly seq: number;
  readonly openTurn?: number;
  readonly todos?: readonly { content: string; status: 'pending' | 'in_progress' | 'completed' }[];
  readonly activity: TranscriptActivity;
  /** Record views' states by view name. */
  readonly states: Readonly<Record<string, unknown>>;
  readonly usage: UsageCarry;
  /** Items from before `seq` that later events may change (each once, by key). */
  readonly open: readonly TranscriptItem[];
  /** Call ids of the open tool cards that have no result yet. */
  readonly unsettled: readonly string[];
  /** Keys of the open answers still streaming. */
  readonly streams: readonly string[];
}

/** A page given to `Transcript.prepend` does not end where the transcript begins. */
export class TranscriptPageError extends Error {
  readonly code = 'TRANSCRIPT_PAGE_MISMATCH';

  constructor(pageEnd: number, start: number) {
    super(`a page ending before seq ${pageEnd} cannot be put before a transcript starting at seq ${start}`);
    this.name = 'TranscriptPageError';
  }
}

/** The fold's lookups of the items later events may change. */
export interface OpenItemMaps {
  /** Items from before the carry's seq, by key. */
  readonly carried: Map<string, TranscriptItem>;
  /** Tool cards by call id. */
  readonly tools: Map<string, ToolCard>;
  /** Cards without a result, by turn. */
  readonly unsettled: Map<number, Set<ToolCard>>;
  /** Streaming answers by `turn.step`. */
  readonly streams: Map<string, AssistantItem>;
  /** Running compactions by id. */
  readonly compactions: Map<string, CompactionItem>;
}

/** Puts a carry's open items into the fold's lookups. */
export function restoreOpenItems(carry: TranscriptCarry, maps: OpenItemMaps): void {
  for (const item of carry.open) {
    maps.carried.set(item.key, item);
    if (item.kind === 'tool') maps.tools.set(item.callId, item);
    if (item.kind === 'compaction') maps.compactions.set(item.compactionId, item);
  }
  for (const key of carry.streams) {
    const item = maps.carried.get(key);
    if (item?.kind === 'assistant') maps.streams.set(`${item.turn}.${item.step}`, item);
  }
  for (const callId of carry.unsettled) {
    const card = maps.tools.get(callId);
    if (card === undefined) continue;
    let cards = maps.unsettled.get(card.turn);
    if (cards === undefined) maps.unsettled.set(card.turn, (cards = new Set()));
    cards.add(card);
  }
}

/**
 * The items of a carry from the fold's open state: the open turn's cards and every unsettled card,
 * streaming answers and running compactions, each once.
 */
export function openItemsOf(
  openTurn: number | undefined,
  tools: Iterable<ToolCard>,
  unsettled: Iterable<ToolCard>,
  streams: Iterable<AssistantItem>,
  compactions: Iterable<TranscriptItem>,
): TranscriptItem[] {
  const open = new Map<string, TranscriptItem>();
  if (openTurn !== undefined) for (const card of tools) if (card.turn === openTurn) open.set(card.key, card);
  for (const item of [...unsettled, ...streams, ...compactions]) open.set(item.key, item);
  return [...open.values()];
}
