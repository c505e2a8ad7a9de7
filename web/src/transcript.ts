import type { ApprovalRequest, Block, Failure, LogEvent, Usage, WireMessage } from './types.ts';

/** A tool call as its card shows it. */
export interface ToolCard {
  kind: 'tool';
  key: string;
  callId: string;
  name: string;
  arguments: string;
  turn: number;
  step: number;
  state: 'requested' | 'running' | 'awaiting-approval' | 'done' | 'failed';
  approval?: { requestId: string; reason?: string; decision?: string; decisionReason?: string };
  result?: { text: string; isError: boolean; code?: string; meta?: unknown };
  /** The last progress the running call reported (`tool/progress`). */
  progress?: { progress: number; total?: number; message?: string };
}

/** An assistant message, streaming (from chunks) or final. */
export interface AssistantItem {
  kind: 'assistant';
  key: string;
  turn: number;
  step: number;
  blocks: Block[];
  streaming: boolean;
  interrupted: boolean;
  failed: boolean;
  usage?: Usage;
  provider?: string;
  model?: string;
}

/** One entry of the transcript. */
export type TranscriptItem =
  | { kind: 'user'; key: string; message: WireMessage; source: string }
  | AssistantItem
  | ToolCard
  | { kind: 'turn-start'; key: string; turn: number }
  | { kind: 'turn-end'; key: string; turn: number; reason: string; error?: Failure }
  | { kind: 'request-failed'; key: string; turn: number; step: number; failure: Failure }
  | { kind: 'retry'; key: string; attempt: number; delayMs: number; failure: Failure }
  | { kind: 'cancelled'; key: string; cause: string }
  | { kind: 'notice'; key: string; text: string; tag?: string };

/** The session's active goal, as its log tells it. */
export interface ActiveGoal {
  goalId: string;
  objective: string;
  maxRounds: number;
  rounds: number;
}

/** A budget limit that paused the work, waiting for "raise and continue" or "stop". */
export interface PausedBudget {
  seq: number;
  limit: string;
  used: number;
  max: number;
}

/** A task of the agent's todo list. */
export interface Todo {
  content: string;
  status: 'pending' | 'in_progress' | 'completed';
}

/** Tokens and cost of one turn. */
export interface TurnUsage {
  turn: number;
  usage: Usage;
  /** provider/model pairs that served this turn, for pricing. */
  routes: { provider: string; model: string; usage: Usage }[];
}

/**
 * The transcript folded from the durable log, in seq order: a pure function of the events, so a reload
 * (or another tab) renders exactly the same thing. Duplicate or out-of-order events are refused by seq.
 */
export class Transcript {
  items: TranscriptItem[] = [];
  todos: Todo[] | undefined;
  turns: TurnUsage[] = [];
  /** The next seq this transcript expects. */
  nextSeq = 0;
  openTurn: number | undefined;
  activeGoal: ActiveGoal | undefined;
  pausedBudget: PausedBudget | undefined;
  readonly #tools = new Map<string, ToolCard>();
  readonly #streams = new Map<string, AssistantItem>();

  /** Applies one event; returns false (and changes nothing) for an event already applied. */
  apply(event: LogEvent): boolean {
    if (event.seq < this.nextSeq) return false;
    this.nextSeq = event.seq + 1;
    const data = event.data as Record<string, unknown>;
    if (
      event.type.startsWith('goal/') ||
      event.type.startsWith('budget/') ||
      event.type === 'guard/stopped'
    ) {
      this.#pluginRecord(event.seq, event.type, data);
      return true;
    }
    switch (event.type) {
      case 'turn/start':
        // Any new turn (a continuation, or new input) takes the paused work forward or re-pauses it.
        this.pausedBudget = undefined;
        this.openTurn = data.turn as number;
        this.items.push({ kind: 'turn-start', key: `t${event.seq}`, turn: data.turn as number });
        break;
      case 'turn/end':
        this.#turnEnd(event.seq, data);
        break;
      case 'step/end':
        this.#closeStreams(data.turn as number, data.step as number);
        break;
      case 'user/message':
        this.#user(event, data as unknown as WireMessage);
        break;
      case 'assistant/chunk':
        this.#chunk(event.seq, data);
        break;
      case 'assistant/message':
        this.#assistant(event.seq, data);
        break;
      case 'tool/call':
        this.#toolCall(event.seq, data);
        break;
      case 'tool/approval-requested': {
        const card = this.#tools.get(data.callId as string);
        if (card !== undefined) {
          card.state = 'awaiting-approval';
          card.approval = {
            requestId: data.requestId as string,
            ...(typeof data.reason === 'string' ? { reason: data.reason } : {}),
          };
        }
        break;
      }
      case 'tool/approval-decided': {
        const card = this.#tools.get(data.callId as string);
        if (card?.approval !== undefined) {
          card.approval.decision = data.decision as string;
          if (typeof data.reason === 'string') card.approval.decisionReason = data.reason;
          if (card.state === 'awaiting-approval') card.state = 'running';
        }
        break;
      }
      case 'tool/progress': {
        const card = this.#tools.get(data.callId as string);
        if (card !== undefined && typeof data.progress === 'number') {
          card.progress = {
            progress: data.progress,
            ...(typeof data.total === 'number' ? { total: data.total } : {}),
            ...(typeof data.message === 'string' ? { message: data.message } : {}),
          };
        }
        break;
      }
      case 'tool/result':
        this.#toolResult(event.seq, data);
        break;
      case 'request/failed':
        this.items.push({
          kind: 'request-failed',
          key: `f${event.seq}`,
          turn: data.turn as number,
          step: data.step as number,
          failure: data.failure as Failure,
        });
        break;
      case 'llm/retry':
        this.items.push({
          kind: 'retry',
          key: `r${event.seq}`,
          attempt: (data.attempt ?? data.retry) as number,
          delayMs: data.delayMs as number,
          failure: data.failure as Failure,
        });
        break;
      case 'agent/cancelled':
        this.items.push({ kind: 'cancelled', key: `c${event.seq}`, cause: describeCause(data.cause) });
        break;
      case 'todo/write':
        this.todos = (data.todos as Todo[]).slice();
        break;
      case 'compaction/summary':
        this.items.push({
          kind: 'notice',
          key: `n${event.seq}`,
          text: 'Earlier conversation was compacted into a summary.',
        });
        break;
      case 'compaction/end':
        if (data.error !== undefined) {
          this.items.push({
            kind: 'notice',
            key: `n${event.seq}`,
            text: 'Compaction failed; the conversation is unchanged.',
          });
        }
        break;
      default:
        break;
    }
    return true;
  }

  /** The tool card of the call an approval request is about, if the log has shown it. */
  cardFor(request: ApprovalRequest): ToolCard | undefined {
    return this.#tools.get(request.callId);
  }

  /** Tokens of the whole session. */
  sessionUsage(): Usage {
    const total: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    for (const turn of this.turns) addUsage(total, turn.usage);
    return total;
  }

  #pluginRecord(seq: number, type: string, data: Record<string, unknown>): void {
    const notice = (text: string): void => {
      this.items.push({ kind: 'notice', key: `g${seq}`, text, tag: type });
    };
    switch (type) {
      case 'goal/set':
        this.activeGoal = {
          goalId: data.goalId as string,
          objective: data.objective as string,
          maxRounds: data.maxRounds as number,
          rounds: 0,
        };
        notice(
          `Goal set: ${this.activeGoal.objective} (up to ${this.activeGoal.maxRounds} continuation rounds)`,
        );
        break;
      case 'goal/continued': {
        const round = data.round as number;
        if (this.activeGoal !== undefined) this.activeGoal.rounds = round;
        const of = this.activeGoal !== undefined ? ` of ${this.activeGoal.maxRounds}` : '';
        notice(`Goal not yet complete — continuation round ${round}${of}`);
        break;
      }
      case 'goal/completed':
        this.activeGoal = undefined;
        notice(
          `Goal completed after ${plural(data.rounds as number, 'continuation round')}: ${data.evidence as string}`,
        );
        break;
      case 'goal/stopped':
        this.activeGoal = undefined;
        notice(goalStopText(data.reason as string, data.rounds as number));
        break;
      case 'guard/stopped':
        notice(
          `Repetition guard stopped the turn: ${data.name as string} was called ${data.count as number} times ` +
            `with identical arguments. ${data.message as string}`,
        );
        break;
      case 'budget/reached': {
        const reached = {
          seq,
          limit: data.limit as string,
          used: data.used as number,
          max: data.max as number,
        };
        this.pausedBudget = reached;
        notice(
          `Budget reached: ${limitLabel(reached.limit)} — used ${formatAmount(reached.limit, reached.used)} of ` +
            `${formatAmount(reached.limit, reached.max)}. The work is paused.`,
        );
        break;
      }
      case 'budget/raised': {
        const changes: string[] = [];
        for (const scope of ['perTurn', 'perSession'] as const) {
          const change = data[scope] as Record<string, number | null> | undefined;
          for (const [kind, value] of Object.entries(change ?? {})) {
            const limit = `${scope === 'perTurn' ? 'turn' : 'session'}.${kind}`;
            changes.push(
              `${limitLabel(limit)} → ${value === null ? 'unlimited' : formatAmount(limit, value)}`,
            );
          }
        }
        notice(`Budget raised${changes.length > 0 ? `: ${changes.join(', ')}` : ''}`);
        break;
      }
      case 'budget/stopped':
        // The paused work was ended, not resumed: the banner must not come back on a reload.
        if (this.pausedBudget?.seq === data.reachedSeq) this.pausedBudget = undefined;
        notice('Stopped at the budget: the paused work was dropped.');
        break;
      default:
        break;
    }
  }

  #turnEnd(seq: number, data: Record<string, unknown>): void {
    const turn = data.turn as number;
    this.#closeStreams(turn, undefined);
    for (const card of this.#tools.values()) {
      if (card.turn === turn && card.result === undefined) card.state = 'failed';
    }
    const reason = data.reason as { kind: string; error?: Failure };
    const item: TranscriptItem = { kind: 'turn-end', key: `e${seq}`, turn, reason: reason.kind };
    if (reason.error !== undefined) item.error = reason.error;
    this.items.push(item);
    this.openTurn = undefined;
  }

  #user(event: LogEvent, message: WireMessage): void {
    // Compaction checkpoints replace history for the model; people already saw what they shadow.
    if (event.surfaceOp !== undefined && event.surfaceOp !== 'append') return;
    this.items.push({ kind: 'user', key: `u${event.seq}`, message, source: message.source.kind });
  }

  #chunk(seq: number, data: Record<string, unknown>): void {
    const turn = data.turn as number;
    const step = data.step as number;
    const chunk = data.chunk as {
      type: string;
      index?: number;
      text?: string;
      blockType?: string;
      block?: Block;
      id?: string;
      name?: string;
      argumentsDelta?: string;
      reason?: { kind: string };
    };
    const id = `${turn}.${step}`;
    let item = this.#streams.get(id);
    if (item === undefined) {
      item = {
        kind: 'assistant',
        key: `a${seq}`,
        turn,
        step,
        blocks: [],
        streaming: true,
        interrupted: false,
        failed: false,
      };
      this.#streams.set(id, item);
      this.items.push(item);
    }
    const index = chunk.index ?? 0;
    switch (chunk.type) {
      case 'block-start':
        item.blocks[index] ??= emptyBlock(chunk.blockType ?? 'text');
        break;
      case 'text-delta':
      case 'reasoning-delta': {
        const block = (item.blocks[index] ??= emptyBlock(chunk.type === 'text-delta' ? 'text' : 'reasoning'));
        if (block.type === 'text' || block.type === 'reasoning') block.text += chunk.text ?? '';
        break;
      }
      case 'tool-call-delta': {
        const block = (item.blocks[index] ??= {
          type: 'tool-call',
          id: chunk.id ?? '',
          name: chunk.name ?? '',
          arguments: '',
        });
        if (block.type === 'tool-call') {
          if (chunk.name !== undefined) block.name = chunk.name;
          block.arguments += chunk.argumentsDelta ?? '';
        }
        break;
      }
      case 'block-end':
        if (chunk.block !== undefined) item.blocks[index] = chunk.block;
        break;
      case 'finish':
        if (chunk.reason?.kind === 'error' || chunk.reason?.kind === 'aborted') {
          item.failed = chunk.reason.kind === 'error';
          item.interrupted = chunk.reason.kind === 'aborted';
          item.streaming = false;
          // A retried attempt gets a fresh item for its own chunks.
          this.#streams.delete(id);
        }
        break;
      default:
        break;
    }
  }

  #assistant(seq: number, data: Record<string, unknown>): void {
    const turn = data.turn as number;
    const step = data.step as number;
    const message = data.message as WireMessage;
    const id = `${turn}.${step}`;
    let item = this.#streams.get(id);
    if (item === undefined) {
      item = {
        kind: 'assistant',
        key: `a${seq}`,
        turn,
        step,
        blocks: [],
        streaming: false,
        interrupted: false,
        failed: false,
      };
      this.items.push(item);
    }
    this.#streams.delete(id);
    item.blocks = message.content.slice();
    item.streaming = false;
    item.interrupted = data.interrupted === true;
    if (data.usage !== undefined) item.usage = data.usage as Usage;
    if (message.source.provider !== undefined) item.provider = message.source.provider;
    if (message.source.model !== undefined) item.model = message.source.model;
    if (data.usage !== undefined)
      this.#addTurnUsage(turn, data.usage as Usage, item.provider ?? '', item.model ?? '');
    for (const block of message.content) {
      if (block.type !== 'tool-call' || this.#tools.has(block.id)) continue;
      const card: ToolCard = {
        kind: 'tool',
        key: `k${seq}:${block.id}`,
        callId: block.id,
        name: block.name,
        arguments: block.arguments,
        turn,
        step,
        state: 'requested',
      };
      this.#tools.set(block.id, card);
      this.items.push(card);
    }
  }

  #toolCall(seq: number, data: Record<string, unknown>): void {
    const callId = data.callId as string;
    let card = this.#tools.get(callId);
    if (card === undefined) {
      card = {
        kind: 'tool',
        key: `k${seq}:${callId}`,
        callId,
        name: data.name as string,
        arguments: data.arguments as string,
        turn: data.turn as number,
        step: data.step as number,
        state: 'running',
      };
      this.#tools.set(callId, card);
      this.items.push(card);
    }
    card.state = 'running';
  }

  #toolResult(seq: number, data: Record<string, unknown>): void {
    const message = data.message as WireMessage;
    const block = message.content[0];
    if (block === undefined || block.type !== 'tool-result') return;
    let card = this.#tools.get(block.toolCallId);
    if (card === undefined) {
      card = {
        kind: 'tool',
        key: `k${seq}:${block.toolCallId}`,
        callId: block.toolCallId,
        name: '(unknown tool)',
        arguments: '',
        turn: data.turn as number,
        step: data.step as number,
        state: 'running',
      };
      this.#tools.set(block.toolCallId, card);
      this.items.push(card);
    }
    const error = data.error as { code?: string } | undefined;
    card.result = {
      text: block.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n'),
      isError: block.isError === true,
      ...(error?.code !== undefined ? { code: error.code } : {}),
      ...(data.meta !== undefined ? { meta: data.meta } : {}),
    };
    card.state = block.isError === true ? 'failed' : 'done';
  }

  #closeStreams(turn: number, step: number | undefined): void {
    for (const [id, item] of this.#streams) {
      if (item.turn !== turn || (step !== undefined && item.step !== step)) continue;
      // Chunks that never became a message were cut off (Stop, a crash): say so.
      item.streaming = false;
      item.interrupted = true;
      this.#streams.delete(id);
    }
  }

  #addTurnUsage(turn: number, usage: Usage, provider: string, model: string): void {
    let entry = this.turns.find((candidate) => candidate.turn === turn);
    if (entry === undefined) {
      entry = {
        turn,
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        routes: [],
      };
      this.turns.push(entry);
    }
    addUsage(entry.usage, usage);
    entry.routes.push({ provider, model, usage });
  }
}

function emptyBlock(blockType: string): Block {
  if (blockType === 'reasoning') return { type: 'reasoning', text: '' };
  if (blockType === 'tool-call') return { type: 'tool-call', id: '', name: '', arguments: '' };
  return { type: 'text', text: '' };
}

function addUsage(total: Usage, usage: Usage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  total.cacheReadTokens = (total.cacheReadTokens ?? 0) + (usage.cacheReadTokens ?? 0);
  total.cacheWriteTokens = (total.cacheWriteTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function goalStopText(reason: string, rounds: number): string {
  switch (reason) {
    case 'round-limit':
      return `Goal stopped: it used all ${plural(rounds, 'continuation round')} without being completed`;
    case 'no-progress':
      return 'Goal stopped: the last round made no progress (no tool effects and nothing new said)';
    case 'cancelled':
      return 'Goal stopped: the turn was stopped';
    case 'cleared':
      return 'Goal cleared';
    case 'replaced':
      return 'Goal replaced by a new goal';
    default:
      return `Goal stopped: ${reason}`;
  }
}

/** A budget limit name (`session.tokens`) in words. */
export function limitLabel(limit: string): string {
  const [scope, kind] = limit.split('.');
  const what = kind === 'costUsd' ? 'cost' : (kind ?? limit);
  return `${scope === 'turn' ? 'per-turn' : 'session'} ${what}`;
}

/** An amount of a budget limit (dollars for cost, whole numbers otherwise). */
export function formatAmount(limit: string, value: number): string {
  return limit.endsWith('.costUsd') ? `$${value.toFixed(value < 1 ? 4 : 2)}` : String(value);
}

function describeCause(cause: unknown): string {
  const kind = (cause as { kind?: string } | undefined)?.kind;
  switch (kind) {
    case 'user':
      return 'Stopped by you';
    case 'parent':
      return 'Stopped because the parent agent stopped';
    case 'disposed':
      return 'Stopped because the session was closed';
    case 'hook':
      return `Stopped by a plugin: ${(cause as { reason?: string }).reason ?? ''}`;
    default:
      return 'Stopped';
  }
}

/** The price of some tokens in US dollars, or undefined without prices. */
export function priceOf(
  usage: Usage,
  pricing: { input: number; cachedInput?: number; cacheWrite?: number; output: number } | undefined,
): number | undefined {
  if (pricing === undefined) return undefined;
  return (
    (usage.inputTokens * pricing.input +
      (usage.cacheReadTokens ?? 0) * (pricing.cachedInput ?? pricing.input) +
      (usage.cacheWriteTokens ?? 0) * (pricing.cacheWrite ?? pricing.input) +
      usage.outputTokens * pricing.output) /
    1_000_000
  );
}
