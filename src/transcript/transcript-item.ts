import type { ContentBlock, LlmFailure, TokenUsage, UserMessage } from '../llm/index.ts';
import type { RecordNote, SessionEventMap, TurnEndReason } from '../session/index.ts';

/** Why an agent's work was cancelled, as `agent/cancelled` records it. */
export type CancelCause = SessionEventMap['agent/cancelled']['cause'];

/** What the user decided about a tool call that asked for approval. */
export type ApprovalDecisionKind = SessionEventMap['tool/approval-decided']['decision'];

/** The start of a turn. */
export interface TurnStartItem {
  readonly kind: 'turn-start';
  readonly key: string;
  readonly seq: number;
  readonly turn: number;
}

/** A user-role message the log shows: a prompt, steering, injected context or a plugin's message. */
export interface UserItem {
  readonly kind: 'user';
  readonly key: string;
  readonly seq: number;
  readonly message: UserMessage;
  /** The message's `source.kind` (`user`, `steer`, `inject`, `goal`, …). */
  readonly source: string;
  /** The text blocks joined. */
  readonly text: string;
  /** The message's images, in order (their data stays in `message`). */
  readonly images: readonly TranscriptImage[];
}

/** An image a user message carries, as a transcript names it. */
export interface TranscriptImage {
  readonly kind: 'image';
  readonly mediaType: string;
  /** The decoded size of inline data; absent for an image given by URL. */
  readonly bytes?: number;
  readonly url?: string;
}

/** A model answer: streaming (from `assistant/chunk`s) until its `assistant/message`, then final. */
export interface AssistantItem {
  readonly kind: 'assistant';
  readonly key: string;
  readonly seq: number;
  readonly turn: number;
  readonly step: number;
  /** Text, reasoning and tool-call blocks; while streaming, as far as the chunks go. */
  blocks: ContentBlock[];
  streaming: boolean;
  /** The answer was cut off (Stop, a crash) before it was complete. */
  interrupted: boolean;
  /** The attempt failed (its stream finished with an error); a retry gets a new item. */
  failed: boolean;
  usage?: TokenUsage;
  provider?: string;
  model?: string;
}

/** Where a tool call is: asked for by the model, waiting for approval, running, or finished. */
export type ToolCardState = 'requested' | 'awaiting-approval' | 'running' | 'done' | 'failed';

/** A tool call's approval: the request and, once made, the decision. */
export interface ToolApproval {
  requestId: string;
  reason?: string;
  decision?: ApprovalDecisionKind;
  decisionReason?: string;
}

/** A tool call's result as its card shows it. */
export interface ToolCardResult {
  /** The text parts joined by newlines; other parts as `[image]`-style placeholders. */
  readonly text: string;
  readonly content: readonly ContentBlock[];
  readonly isError: boolean;
  /** The error code the tool pipeline recorded for a failed call. */
  readonly code?: string;
  readonly meta?: unknown;
}

/** One tool call, from the model's request through approval to its result. */
export interface ToolCard {
  readonly kind: 'tool';
  readonly key: string;
  readonly seq: number;
  readonly callId: string;
  name: string;
  arguments: string;
  readonly turn: number;
  readonly step: number;
  state: ToolCardState;
  approval?: ToolApproval;
  result?: ToolCardResult;
  /** The session a result's meta names by `childSessionId` (a subagent's), to open from the card. */
  childSessionId?: string;
  /** The last progress the running call reported (`tool/progress`, e.g. from an MCP server). */
  progress?: ToolProgressNote;
}

/** How far a running call has got, as its tool reported it. */
export interface ToolProgressNote {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** How a turn ended. */
export interface TurnEndItem {
  readonly kind: 'turn-end';
  readonly key: string;
  readonly seq: number;
  readonly turn: number;
  readonly reason: TurnEndReason;
}

/** A model request that failed (`request/failed`). */
export interface RequestFailedItem {
  readonly kind: 'request-failed';
  readonly key: string;
  readonly seq: number;
  readonly turn: number;
  readonly step: number;
  readonly failure: LlmFailure;
}

/** A retry about to wait (`llm/retry`). */
export interface RetryItem {
  readonly kind: 'retry';
  readonly key: string;
  readonly seq: number;
  readonly turn: number;
  readonly step: number;
  /** 1 for the first retry of a failure chain. */
  readonly attempt: number;
  readonly delayMs: number;
  /** When the wait ends (epoch milliseconds): the record's time plus the delay, for countdowns. */
  readonly endsAt: number;
  readonly failure: LlmFailure;
}

/** Work stopped by the user, a parent agent, a plugin or closing the session (`agent/cancelled`). */
export interface CancelledItem {
  readonly kind: 'cancelled';
  readonly key: string;
  readonly seq: number;
  readonly cause: CancelCause;
  /** The cause in words, e.g. "Stopped by you". */
  readonly text: string;
}

/** One compaction attempt, from `compaction/start` to `compaction/end`. */
export interface CompactionItem {
  readonly kind: 'compaction';
  readonly key: string;
  readonly seq: number;
  readonly compactionId: string;
  readonly trigger: 'pressure' | 'overflow' | 'manual';
  state: 'running' | 'done' | 'failed';
  /** Set when older history was summarized: tokens of the history replaced, and of the summary. */
  summary?: { shadowedTokens: number; summaryTokens: number };
  /** Set when oversized tool results were shortened: how many, tokens before and after. */
  prune?: { results: number; shadowedTokens: number; prunedTokens: number };
  error?: { code: string; message: string };
}

/** A record described by a module's record view (a goal, budget or guard record…). */
export interface RecordItem extends RecordNote {
  readonly kind: 'record';
  readonly key: string;
  readonly seq: number;
  /** The record's event type, e.g. `goal/set`. */
  readonly type: string;
  readonly data: unknown;
}

/** A durable event this transcript has no presentation for (a module without a record view). */
export interface OtherEventItem {
  readonly kind: 'event';
  readonly key: string;
  readonly seq: number;
  readonly type: string;
  readonly data: unknown;
}

/** One entry of a transcript, in log order. */
export type TranscriptItem =
  | TurnStartItem
  | UserItem
  | AssistantItem
  | ToolCard
  | TurnEndItem
  | RequestFailedItem
  | RetryItem
  | CancelledItem
  | CompactionItem
  | RecordItem
  | OtherEventItem;

/** What the agent is doing, as far as the log tells: for spinners and status lines. */
export type TranscriptActivity =
  | { readonly kind: 'idle' }
  | { readonly kind: 'waiting' }
  | { readonly kind: 'thinking' }
  | { readonly kind: 'writing' }
  | { readonly kind: 'approval'; readonly name: string }
  | { readonly kind: 'tool'; readonly name: string; readonly progress?: ToolProgressNote }
  | { readonly kind: 'compacting' };

/** Tokens of one turn, with the provider/model routes that served it (for pricing). */
export interface TurnUsage {
  readonly turn: number;
  /** The turn's total (cache counts included, zero when absent). */
  readonly usage: Required<Omit<TokenUsage, 'reasoningTokens'>>;
  readonly routes: readonly {
    readonly provider: string;
    readonly model: string;
    readonly usage: TokenUsage;
  }[];
}
