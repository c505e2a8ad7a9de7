import type {
  AssistantMessage,
  ContentBlock,
  LlmCallConfig,
  LlmFailure,
  StreamChunk,
  TokenUsage,
  ToolResultMessage,
  ToolSchema,
  UserMessage,
} from '../llm/index.ts';

/** Why a turn ended; `aborted` stays coarse, the cause is recorded by `agent/cancelled`. */
export type TurnEndReason =
  | { kind: 'completed' }
  | { kind: 'max-tokens' }
  | { kind: 'blocked' }
  | { kind: 'error'; error: LlmFailure }
  | { kind: 'aborted' }
  | { kind: 'interrupted' };

/** The request envelope logged by `request/header`. */
export interface EpochHeader {
  config: LlmCallConfig;
  adapterDefaults?: { reasoningEffort?: true; maxTokens?: true };
  system?: string;
  tools?: ToolSchema[];
}

/** How a surface event changes the model-visible surface. */
export type SurfaceOp = 'append' | { op: 'replace'; start: number; end: number };

/**
 * The durable vocabulary: event type → data. Modules that own further durable events add them by
 * declaration merging and register their names with `registerSessionEventTypes`.
 */
export interface SessionEventMap {
  'turn/start': { turn: number };
  'turn/end': { turn: number; reason: TurnEndReason };
  'step/start': { turn: number; step: number };
  'step/end': { turn: number; step: number };
  'user/message': UserMessage;
  'assistant/chunk': { turn: number; step: number; chunk: StreamChunk };
  'assistant/message': {
    turn: number;
    step: number;
    message: AssistantMessage;
    usage?: TokenUsage;
    interrupted?: true;
  };
  'tool/call': { turn: number; step: number; callId: string; name: string; arguments: string };
  'tool/result': {
    turn: number;
    step: number;
    message: ToolResultMessage;
    error?: { name: string; code: string };
    meta?: unknown;
  };
  'request/header': { header: EpochHeader; reason: 'initial' | 'resume' | 'change' };
  'request/context': { provider: string; model: string; contextWindow?: number };
  'request/failed': { turn: number; step: number; failure: LlmFailure };
  'session/end-seed': Record<string, never>;
}

/** Any durable event type. */
export type SessionEventType = keyof SessionEventMap & string;

/** One durable log entry. */
export interface SessionEvent<Type extends SessionEventType = SessionEventType> {
  readonly type: Type;
  readonly seq: number;
  readonly time: number;
  readonly data: Readonly<SessionEventMap[Type]>;
  readonly ignorable?: true;
  readonly surfaceOp?: SurfaceOp;
  readonly sourceEventSeqs?: readonly number[];
}

/**
 * Every durable event as a discriminated union on `type`: `event.type === 'tool/result'` narrows
 * `event.data`. Event types that modules add to `SessionEventMap` by declaration merging join it.
 */
export type DurableEvent = { [Type in SessionEventType]: SessionEvent<Type> }[SessionEventType];

/** A log entry whose type this code may not know (as read from storage). */
export interface AnySessionEvent {
  readonly type: string;
  readonly seq: number;
  readonly time: number;
  readonly data: unknown;
  readonly ignorable?: true;
  readonly surfaceOp?: SurfaceOp;
  readonly sourceEventSeqs?: readonly number[];
}

/** The three event types that may carry a surface operation. */
export const surfaceEventTypes: ReadonlySet<string> = new Set([
  'user/message',
  'assistant/message',
  'tool/result',
]);

const knownTypes = new Set<string>([
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'user/message',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'request/header',
  'request/context',
  'request/failed',
  'session/end-seed',
]);

/** Registers durable event types owned by a module, so that loaders accept them. */
export function registerSessionEventTypes(types: Iterable<string>): void {
  for (const type of types) knownTypes.add(type);
}

/** True when a durable event type has been registered by some module. */
export function isKnownSessionEventType(type: string): boolean {
  return knownTypes.has(type);
}

/** Narrows a stored event to the typed union when its type is registered (known to this process). */
export function isDurableEvent(event: AnySessionEvent): event is DurableEvent {
  return knownTypes.has(event.type);
}

/** Narrows an event to a type. */
export function isEventOfType<Type extends SessionEventType>(
  event: AnySessionEvent,
  type: Type,
): event is SessionEvent<Type> {
  return event.type === type;
}

/** The content blocks of a surface event's message, or undefined for events that carry none. */
export function surfaceMessageOf(event: AnySessionEvent): { content: readonly ContentBlock[] } | undefined {
  switch (event.type) {
    case 'user/message':
      return event.data as UserMessage;
    case 'assistant/message':
    case 'tool/result':
      return (event.data as { message: { content: readonly ContentBlock[] } }).message;
    default:
      return undefined;
  }
}
