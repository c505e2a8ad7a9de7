import type { Disposer } from '../hooks/index.ts';
import type { Agent, AgentOptions } from './agent.ts';
import type { AgentServices } from './agent-services.ts';

/** What a plugin is given: the harness's services, and a way to start agents (for subagents). */
export interface PluginHost extends AgentServices {
  /** Creates an agent over a new session. */
  createAgent(options?: AgentOptions): Promise<Agent>;
}

/** Optional behaviour attached through hooks and services only; `setup` returns its disposer. */
export interface HarnessPlugin {
  readonly name: string;
  setup(host: PluginHost): Disposer | void;
}
