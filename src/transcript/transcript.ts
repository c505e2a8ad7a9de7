import type { UserMessage } from '../llm/index.ts';
import type { AnySessionEvent, DurableEvent, RecordView, SessionEventMap } from '../session/index.ts';
import type {
  AssistantItem,
  CompactionItem,
  ToolCard,
  TranscriptActivity,
  TranscriptItem,
  TurnUsage,
} from './transcript-item.ts';
import { applyStreamChunk } from './assistant-stream.ts';
import { compactionItem, recordCompaction } from './compaction-item.ts';
import type { TranscriptCarry } from './transcript-carry.ts';
import { TranscriptPageError, openItemsOf, restoreOpenItems } from './transcript-carry.ts';
import type { TranscriptPricing } from './transcript-parts.ts';
import { describeCancelCause, imagesOf, textOf } from './transcript-parts.ts';
import {
  recordApprovalDecision,
  recordApprovalRequest,
  recordProgress,
  recordResult,
  toolCard,
} from './tool-card.ts';
import type { TranscriptCost } from './turn-usage-ledger.ts';
import { TurnUsageLedger } from './turn-usage-ledger.ts';

/** Options of a `Transcript`. */
export interface TranscriptOptions {
  /** How modules' records read (e.g. `defaultRecordViews`); records without a view become `event` items. */
  readonly views?: readonly RecordView[];
  /** Go on from this point of the log (`Transcript.carry()` of the events before it) instead of seq 0. */
  readonly carry?: TranscriptCarry;
}

// Events that change no item and no state of a transcript (envelopes, boundaries, inbox bookkeeping).
const quietTypes: ReadonlySet<string> = new Set([
  'step/start',
  'request/header',
  'request/context',
  'agent/inbox/spliced',
  'session/end-seed',
  'llm/retry-started',
]);

/**
 * The transcript of a session, folded from its durable log one event at a time (feed it a whole log or
 * live `session/event`s): turns, messages, streaming answers and reasoning, tool cards with approval and
 * result, failures, retries, cancellations, compactions, module records, todos and usage. A pure
 * function of the events in seq order, so a reload (or another tab) folds to the same transcript.
 * Incremental: each event costs O(1) of what came before (a delta extends one block, a turn's end
 * visits only that turn's unfinished calls), so a live view folds as it goes instead of refolding.
 */
export class Transcript {
  /** The next seq this transcript expects; earlier events are ignored as repeats. */
  nextSeq = 0;
  /** The turn that has started and not ended. */
  openTurn: number | undefined;
  /** The agent's task list after the latest `todo/write`. */
  todos: readonly { content: string; status: 'pending' | 'in_progress' | 'completed' }[] | undefined;
  activity: TranscriptActivity = { kind: 'idle' };
  #items: TranscriptItem[] = [];
  readonly #usage: TurnUsageLedger;
  // The seq this fold started from, and the items from before it that it still changes (by key).
  #start = 0;
  readonly #carried = new Map<string, TranscriptItem>();
  readonly #tools = new Map<string, ToolCard>();
  // Cards without a result, per turn: what a turn's end marks failed.
  readonly #unsettled = new Map<number, Set<ToolCard>>();
  readonly #streams = new Map<string, AssistantItem>();
  readonly #compactions = new Map<string, CompactionItem>();
  readonly #views: readonly RecordView[];
  readonly #viewByType = new Map<string, RecordView>();
  readonly #states = new Map<RecordView, unknown>();
  #touched: TranscriptItem[] = [];

  constructor(options: TranscriptOptions = {}) {
    this.#views = options.views ?? [];
    for (const view of this.#views) {
      this.#states.set(view, view.initialState);
      for (const type of view.types) this.#viewByType.set(type, view);
    }
    const carry = options.carry !== undefined ? structuredClone(options.carry) : undefined;
    this.#usage = new TurnUsageLedger(carry?.usage);
    if (carry !== undefined) this.#goOnFrom(carry);
  }

  /** A transcript of a whole log. */
  static of(events: Iterable<AnySessionEvent>, options: TranscriptOptions = {}): Transcript {
    const transcript = new Transcript(options);
    for (const event of events) transcript.apply(event);
    return transcript;
  }

  /** The seq of the first event this transcript folded (0, or a carry's, or an earlier page's). */
  get startSeq(): number {
    return this.#start;
  }

  /** The items in log order (items change in place as later events arrive: streams, tool cards…). */
  get items(): readonly TranscriptItem[] {
    return this.#items;
  }

  /** Tokens per turn, in turn order. */
  get turns(): readonly TurnUsage[] {
    return this.#usage.turns;
  }

  /**
   * Applies one event; returns the items it added or changed (possibly none), or undefined (changing
   * nothing) for an event already applied.
   */
  apply(event: AnySessionEvent): readonly TranscriptItem[] | undefined {
    if (event.seq < this.nextSeq) return undefined;
    this.nextSeq = event.seq + 1;
    this.#touched = [];
    const typed = event as DurableEvent;
    for (const view of this.#views) {
      if (view.reduce !== undefined) this.#states.set(view, view.reduce(this.#states.get(view), typed));
    }
    const view = this.#viewByType.get(event.type);
    if (view !== undefined) {
      const note = view.describe(typed, this.#states.get(view));
      if (note !== undefined) {
        this.#add({
          kind: 'record',
          key: `g${event.seq}`,
          seq: event.seq,
          type: event.type,
          data: event.data,
          text: note.text,
          tone: note.tone,
        });
      }
    } else {
      this.#apply(typed);
    }
    return this.#touched;
  }

  /** A record view's state after the events applied so far (e.g. the active goal). */
  stateOf<State>(view: RecordView<State>): State {
    return (
      this.#states.has(view as RecordView) ? this.#states.get(view as RecordView) : view.initialState
    ) as State;
  }

  /** The tool card of a call, once the log has shown it. */
  toolCard(callId: string): ToolCard | undefined {
    return this.#tools.get(callId);
  }

  /** Tokens of the whole session. */
  usage(): TurnUsage['usage'] {
    return this.#usage.total();
  }

  /** The cost of the session, or of one turn, at the given prices (provider/model → per million tokens). */
  cost(
    pricing: (provider: string, model: string) => TranscriptPricing | undefined,
    turn?: number,
  ): TranscriptCost {
    return this.#usage.cost(pricing, turn);
  }

  /** What a transcript needs to go on from here without the events so far (a deep copy, plain JSON). */
  carry(): TranscriptCarry {
    const unsettled = [...this.#unsettled.values()].flatMap((cards) => [...cards]);
    const states: Record<string, unknown> = {};
    for (const view of this.#views) states[view.name] = this.#states.get(view);
    return structuredClone({
      seq: this.nextSeq,
      ...(this.openTurn !== undefined ? { openTurn: this.openTurn } : {}),
      ...(this.todos !== undefined ? { todos: this.todos } : {}),
      activity: this.activity,
      states,
      usage: this.#usage.carry(),
      open: openItemsOf(
        this.openTurn,
        this.#tools.values(),
        unsettled,
        this.#streams.values(),
        this.#compactions.values(),
      ),
      unsettled: unsettled.map((card) => card.callId),
      streams: [...this.#streams.values()].map((item) => item.key),
    });
  }

  /**
   * Puts the items (and turn usage) of the part of the log just before this transcript's start in front
   * of its own: `page` is a transcript of those events (from its own carry, or from seq 0). An item
   * both folded keeps this transcript's later state. Throws `TranscriptPageError` when the page does
   * not end where this transcript starts.
   */
  prepend(page: Transcript): void {
    if (page.nextSeq !== this.#start) throw new TranscriptPageError(page.nextSeq, this.#start);
    const earlier = page.#items.map((item) => this.#carried.get(item.key) ?? item);
    this.#items = earlier.concat(this.#items);
    for (const [key, item] of page.#carried) if (!this.#carried.has(key)) this.#carried.set(key, item);
    this.#usage.prepend(page.#usage);
    this.#start = page.#start;
  }

  #goOnFrom(carry: TranscriptCarry): void {
    this.nextSeq = this.#start = carry.seq;
    this.openTurn = carry.openTurn;
    this.todos = carry.todos;
    this.activity = carry.activity;
    for (const view of this.#views) {
      if (Object.hasOwn(carry.states, view.name)) this.#states.set(view, carry.states[view.name]);
    }
    restoreOpenItems(carry, {
      carried: this.#carried,
      tools: this.#tools,
      unsettled: this.#unsettled,
      streams: this.#streams,
      compactions: this.#compactions,
    });
  }

  #apply(event: DurableEvent): void {
    switch (event.type) {
      case 'turn/start':
        this.openTurn = event.data.turn;
        this.activity = { kind: 'waiting' };
        this.#add({ kind: 'turn-start', key: `t${event.seq}`, seq: event.seq, turn: event.data.turn });
        break;
      case 'turn/end':
        this.#turnEnd(event);
        break;
      case 'step/start':
        this.activity = { kind: 'waiting' };
        break;
      case 'step/end':
        this.#closeStreams(event.data.turn, event.data.step);
        break;
      case 'user/message':
        this.#user(event);
        break;
      case 'assistant/chunk':
        this.#chunk(event);
        break;
      case 'assistant/message':
        this.#assistant(event);
        break;
      case 'tool/call':
        this.#toolCall(event);
        break;
      case 'tool/approval-requested': {
        const card = this.#tools.get(event.data.callId);
        if (card === undefined) {
          this.activity = { kind: 'approval', name: event.data.name };
          break;
        }
        this.activity = recordApprovalRequest(card, event);
        this.#touch(card);
        break;
      }
      case 'tool/approval-decided': {
        const card = this.#tools.get(event.data.callId);
        if (card?.approval === undefined) break;
        this.activity = recordApprovalDecision(card, card.approval, event);
        this.#touch(card);
        break;
      }
      case 'tool/progress': {
        const card = this.#tools.get(event.data.callId);
        if (card === undefined || card.result !== undefined) break;
        this.activity = recordProgress(card, event);
        this.#touch(card);
        break;
      }
      case 'tool/result':
        this.#toolResult(event);
        break;
      case 'request/failed':
        this.#add({
          kind: 'request-failed',
          key: `f${event.seq}`,
          seq: event.seq,
          turn: event.data.turn,
          step: event.data.step,
          failure: event.data.failure,
        });
        break;
      case 'llm/retry': {
        // The spec's record names the attempt `retry`; Rein's plugin writes `attempt`.
        const data = event.data as SessionEventMap['llm/retry'] & { retry?: number };
        this.#add({
          kind: 'retry',
          key: `r${event.seq}`,
          seq: event.seq,
          turn: data.turn,
          step: data.step,
          attempt: data.attempt ?? data.retry ?? 1,
          delayMs: data.delayMs,
          endsAt: event.time + data.delayMs,
          failure: data.failure,
        });
        break;
      }
      case 'agent/cancelled':
        this.#add({
          kind: 'cancelled',
          key: `c${event.seq}`,
          seq: event.seq,
          cause: event.data.cause,
          text: describeCancelCause(event.data.cause),
        });
        break;
      case 'todo/write':
        this.todos = event.data.todos.map((todo) => ({ content: todo.content, status: todo.status }));
        break;
      case 'compaction/start': {
        const item = compactionItem(event.seq, event.data.compactionId, event.data.trigger);
        this.#compactions.set(item.compactionId, item);
        this.activity = { kind: 'compacting' };
        this.#add(item);
        break;
      }
      case 'compaction/summary':
      case 'compaction/prune':
      case 'compaction/end': {
        const item = this.#compaction(event.seq, event.data.compactionId);
        recordCompaction(item, event);
        if (event.type === 'compaction/end') {
          this.#compactions.delete(item.compactionId);
          this.activity = this.openTurn !== undefined ? { kind: 'waiting' } : { kind: 'idle' };
        }
        this.#touch(item);
        break;
      }
      default:
        if (quietTypes.has(event.type)) break;
        this.#add({
          kind: 'event',
          key: `o${event.seq}`,
          seq: event.seq,
          type: event.type,
          data: event.data,
        });
    }
  }

  #add(item: TranscriptItem): void {
    this.#items.push(item);
    this.#touched.push(item);
  }

  #touch(item: TranscriptItem): void {
    if (!this.#touched.includes(item)) this.#touched.push(item);
  }

  #turnEnd(event: DurableEvent & { type: 'turn/end' }): void {
    const turn = event.data.turn;
    this.#closeStreams(turn, undefined);
    for (const card of this.#unsettled.get(turn) ?? []) {
      if (card.state === 'failed') continue;
      card.state = 'failed';
      this.#touch(card);
    }
    this.#unsettled.delete(turn);
    this.#add({ kind: 'turn-end', key: `e${event.seq}`, seq: event.seq, turn, reason: event.data.reason });
    this.openTurn = undefined;
    this.activity = { kind: 'idle' };
  }

  #user(event: DurableEvent & { type: 'user/message' }): void {
    // Compaction checkpoints replace history for the model; people already saw what they shadow.
    if (event.surfaceOp !== undefined && event.surfaceOp !== 'append') return;
    const message = event.data as UserMessage;
    this.#add({
      kind: 'user',
      key: `u${event.seq}`,
      seq: event.seq,
      message,
      source: message.source.kind,
      text: textOf(message.content),
      images: imagesOf(message.content),
    });
  }

  #stream(seq: number, turn: number, step: number, streaming: boolean): AssistantItem {
    const id = `${turn}.${step}`;
    let item = this.#streams.get(id);
    if (item === undefined) {
      item = {
        kind: 'assistant',
        key: `a${seq}`,
        seq,
        turn,
        step,
        blocks: [],
        streaming,
        interrupted: false,
        failed: false,
      };
      if (streaming) this.#streams.set(id, item);
      this.#add(item);
    }
    return item;
  }

  #chunk(event: DurableEvent & { type: 'assistant/chunk' }): void {
    const { turn, step, chunk } = event.data;
    if (chunk.type === 'usage') return;
    const item = this.#stream(event.seq, turn, step, true);
    this.#touch(item);
    const activity = applyStreamChunk(item, chunk);
    if (activity !== undefined) this.activity = activity;
    // A failed or cut attempt is over: a retry gets a fresh item for its own chunks.
    if (chunk.type === 'finish' && !item.streaming) this.#streams.delete(`${turn}.${step}`);
  }

  #assistant(event: DurableEvent & { type: 'assistant/message' }): void {
    const { turn, step, message, usage } = event.data;
    const item = this.#stream(event.seq, turn, step, false);
    this.#streams.delete(`${turn}.${step}`);
    this.#touch(item);
    item.blocks = message.content.slice();
    item.streaming = false;
    item.interrupted = event.data.interrupted === true;
    item.provider = message.source.provider;
    item.model = message.source.model;
    if (usage !== undefined) {
      item.usage = usage;
      this.#usage.add(turn, usage, message.source.provider, message.source.model);
    }
    for (const block of message.content) {
      if (block.type !== 'tool-call' || this.#tools.has(block.id)) continue;
      this.#addCard(toolCard(event.seq, block.id, block.name, block.arguments, turn, step, 'requested'));
    }
  }

  #addCard(card: ToolCard): ToolCard {
    this.#tools.set(card.callId, card);
    let unsettled = this.#unsettled.get(card.turn);
    if (unsettled === undefined) this.#unsettled.set(card.turn, (unsettled = new Set()));
    unsettled.add(card);
    this.#add(card);
    return card;
  }

  #toolCall(event: DurableEvent & { type: 'tool/call' }): void {
    const { callId, name, turn, step } = event.data;
    const card =
      this.#tools.get(callId) ??
      this.#addCard(toolCard(event.seq, callId, name, event.data.arguments, turn, step, 'running'));
    card.state = 'running';
    this.activity = { kind: 'tool', name };
    this.#touch(card);
  }

  #toolResult(event: DurableEvent & { type: 'tool/result' }): void {
    // A pruned replacement is for the model; the card keeps what the tool returned.
    if (event.surfaceOp !== undefined && event.surfaceOp !== 'append') return;
    const block = event.data.message.content[0];
    if (block === undefined || block.type !== 'tool-result') return;
    const card =
      this.#tools.get(block.toolCallId) ??
      this.#addCard(
        toolCard(
          event.seq,
          block.toolCallId,
          '(unknown tool)',
          '',
          event.data.turn,
          event.data.step,
          'running',
        ),
      );
    recordResult(card, block, event);
    this.#unsettled.get(card.turn)?.delete(card);
    this.activity = { kind: 'waiting' };
    this.#touch(card);
  }

  #compaction(seq: number, compactionId: string): CompactionItem {
    const open = this.#compactions.get(compactionId);
    if (open !== undefined) return open;
    // A log cut before its `compaction/start` (a fork) still shows what the compaction did.
    const item = compactionItem(seq, compactionId, 'manual');
    this.#compactions.set(compactionId, item);
    this.#add(item);
    return item;
  }

  #closeStreams(turn: number, step: number | undefined): void {
    for (const [id, item] of this.#streams) {
      if (item.turn !== turn || (step !== undefined && item.step !== step)) continue;
      // Chunks that never became a message were cut off (Stop, a crash): say so.
      item.streaming = false;
      item.interrupted = true;
      this.#streams.delete(id);
      this.#touch(item);
    }
  }
}
