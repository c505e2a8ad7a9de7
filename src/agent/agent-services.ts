import type { HookBus } from '../hooks/index.ts';
import type { LlmService } from '../llm/index.ts';
import type { SystemPromptAssembler } from '../prompt/index.ts';
import type { Session, SessionStore } from '../session/index.ts';
import type { ApprovalService, ToolPipeline, ToolRegistry } from '../tools/index.ts';
import type { Agent, AgentOptions } from './agent.ts';
import type { AgentRegistry } from './agent-registry.ts';

/** The services a driver is given: everything an agent needs, nothing it must construct. */
export interface AgentServices {
  readonly hooks: HookBus;
  readonly llm: LlmService;
  readonly tools: ToolRegistry;
  readonly pipeline: ToolPipeline;
  readonly approvals: ApprovalService;
  readonly prompt: SystemPromptAssembler;
  readonly registry: AgentRegistry;
  readonly store: SessionStore;
  /** The default bound of the rolling pool of parallel tool calls. */
  readonly maxParallelToolCalls: number;
}

/** Builds a live Agent over a session; the default loop is one such driver, and it can be replaced. */
export type AgentDriver = (services: AgentServices, session: Session, options: AgentOptions) => Agent;
