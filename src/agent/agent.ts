import type {
  LlmCallConfig,
  LlmFailure,
  UserMessage,
  ContentBlock,
  RetryPolicy,
  LlmError,
} from '../llm/index.ts';
import type { Session } from '../session/index.ts';
import type { Inbox } from './inbox.ts';

/** The two ordered queues of the inbox. */
export type InboxTarget = 'next-turn' | 'next-step';

/** Who cancelled: the user, the parent agent, a hook (with its reason), or disposal. */
export type AgentCancelCause =
  { kind: 'user' } | { kind: 'parent' } | { kind: 'hook'; reason: string } | { kind: 'disposed' };

/** `running` while the driver drains queued work (possibly many turns); `idle` otherwise. */
export type AgentStatus = 'idle' | 'running';

/** The authoritative answer of `agent/pre-step`: enter with these messages, or reject the step. */
export type PreStepDecision = { kind: 'enter'; messages: UserMessage[] } | { kind: 'reject' };

/** Builds the `enter` decision. */
export function enter(messages: readonly UserMessage[]): PreStepDecision {
  return { kind: 'enter', messages: [...messages] };
}

/** Builds the `reject` decision. */
export function reject(): PreStepDecision {
  return { kind: 'reject' };
}

/** The answer of `agent/request-error` that asks for another attempt in a new step. */
export type RequestErrorDecision = { kind: 'retry' } | undefined;

/** What an agent is created with. */
export interface AgentOptions {
  /** The agent and session id; random when omitted. A second live agent with the same id is rejected. */
  id?: string;
  provider?: string;
  model?: string;
  maxTokens?: number;
  temperature?: number;
  reasoningEffort?: string;
  /** Tool names this agent sees; all registered tools when omitted. */
  tools?: readonly string[];
  /** The workspace directory tools work in. */
  cwd?: string;
  /** Extra system-prompt text for this agent. */
  instructions?: string;
  /** The parent agent, for subagents: cancelling the parent cancels this one with `{ kind: 'parent' }`. */
  parent?: Agent;
  /** The parent's tool call that started this agent. */
  parentCallId?: string;
  /** Nesting depth of subagents (0 for a top-level agent). */
  delegationDepth?: number;
  /** Bound of the rolling pool of parallel tool calls (default: the harness's, 10). */
  maxParallelToolCalls?: number;
}

/** A message given to `send`: a ready message, plain text, or content blocks. */
export type MessageInput = UserMessage | string | readonly ContentBlock[];

/** The Agent: an inbox, a driver that drains it into turns, cancellation, and the session log. */
export interface Agent {
  readonly id: string;
  readonly session: Session;
  readonly inbox: Inbox;
  readonly status: AgentStatus;
  readonly options: Readonly<AgentOptions>;
  readonly disposed: boolean;
  /** Queues a message on a target and optionally wakes the driver; returns the queued message. */
  send(message: MessageInput, target: InboxTarget, wakeup: boolean): UserMessage;
  /** `send(message, 'next-turn', true)`: a new turn after the current work. */
  followup(message: MessageInput): UserMessage;
  /** `send(message, 'next-step', true)`: steers the running turn at its next step. */
  steer(message: MessageInput): UserMessage;
  /** `send(message, 'next-step', false)`: rides the next request without waking the driver. */
  inject(message: MessageInput): UserMessage;
  /** Aborts the current activity with a cause (the first wins) and clears the inbox unless `keepInbox`. */
  cancel(cause: AgentCancelCause, options?: { keepInbox?: boolean }): void;
  /** Resolves (never rejects) once no driver and no maintenance task remains. */
  whenIdle(): Promise<void>;
  /** Runs a task while idle (status stays idle); waking sends during it are latched. */
  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Cancels with `{ kind: 'disposed' }`, waits for idle, unwinds scoped hooks and leaves the registry. */
  dispose(): Promise<void>;
}

/** Payload of `agent/request`: the coordinates of one model request attempt. */
export interface AgentRequestPayload {
  readonly agent: Agent;
  readonly turn: number;
  readonly step: number;
  readonly signal: AbortSignal;
}

/** Payload of `agent/request-error`: the facts of one failed attempt, after its step closed. */
export interface AgentRequestErrorPayload {
  readonly agent: Agent;
  readonly turn: number;
  /** The failed (already closed) step. */
  readonly step: number;
  readonly provider: string;
  readonly model: string;
  readonly error: LlmError;
  readonly failure: Readonly<LlmFailure>;
  /** Failures of the earlier attempts of this failure chain (since the last successful response). */
  readonly previousFailures: readonly Readonly<LlmFailure>[];
  /** The route's retry policy, undefined when the route was not prepared. */
  readonly retryPolicy: RetryPolicy | undefined;
  readonly signal: AbortSignal;
}

/** The seed config `agent/request` listeners start from. */
export type { LlmCallConfig };
