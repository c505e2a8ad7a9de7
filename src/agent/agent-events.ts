import type { EmitEvent, SerialEvent, WaterfallEvent } from '../hooks/index.ts';
import type { LlmCallConfig, UserMessage } from '../llm/index.ts';
import { registerSessionEventTypes } from '../session/index.ts';
import type {
  Agent,
  AgentCancelCause,
  AgentRequestErrorPayload,
  AgentRequestPayload,
  AgentStatus,
  InboxTarget,
  PreStepDecision,
  RequestErrorDecision,
} from './agent.ts';

declare module '../hooks/hook-event-map.ts' {
  interface HookEventMap {
    'agent/created': EmitEvent<{ agent: Agent }>;
    'agent/disposed': EmitEvent<{ agent: Agent }>;
    'agent/session-start': EmitEvent<{ agent: Agent; source: 'startup' | 'resume' }>;
    'agent/status': EmitEvent<{ agent: Agent; status: AgentStatus }>;
    'agent/error': EmitEvent<{ agent: Agent; turn: number; step: number; error: unknown }>;
    'agent/inbox/inserted': EmitEvent<{ agent: Agent; target: InboxTarget; message: UserMessage }>;
    'agent/inbox/discarded': EmitEvent<{ agent: Agent; target: InboxTarget; message: UserMessage }>;
    'agent/inbox/claimed': EmitEvent<{ agent: Agent; message: UserMessage; turn: number }>;
    'agent/pre-step': WaterfallEvent<
      { agent: Agent; messages: readonly UserMessage[]; turn: number; step: number; signal: AbortSignal },
      PreStepDecision
    >;
    'agent/request': WaterfallEvent<AgentRequestPayload, LlmCallConfig>;
    'agent/request-error': WaterfallEvent<AgentRequestErrorPayload, RequestErrorDecision>;
    'agent/turn-stopping': SerialEvent<{ agent: Agent; turn: number; signal: AbortSignal }>;
  }
}

declare module '../session/session-event.ts' {
  interface SessionEventMap {
    'agent/inbox/spliced': {
      target: InboxTarget;
      start: number;
      removedCount?: number;
      inserted: UserMessage[];
      outcome?: 'canceled';
    };
    'agent/cancelled': { cause: AgentCancelCause };
  }
}

registerSessionEventTypes(['agent/inbox/spliced', 'agent/cancelled']);

/** The dispatch mode each `agent/*` event declares. */
export const agentEventModes = {
  'agent/created': 'emit',
  'agent/disposed': 'emit',
  'agent/session-start': 'emit',
  'agent/status': 'emit',
  'agent/error': 'emit',
  'agent/inbox/inserted': 'emit',
  'agent/inbox/discarded': 'emit',
  'agent/inbox/claimed': 'emit',
  'agent/pre-step': 'waterfall',
  'agent/request': 'waterfall',
  'agent/request-error': 'waterfall',
  'agent/turn-stopping': 'serial',
} as const;
