import { randomUUID } from 'node:crypto';
import type {
  Agent,
  AgentDriver,
  AgentOptions,
  AgentServices,
  HarnessPlugin,
  PluginHost,
} from './agent/index.ts';
import { AgentRegistry } from './agent/index.ts';
import type { Disposer, ListenerErrorReporter } from './hooks/index.ts';
import { HookBus } from './hooks/index.ts';
import type { LlmAdapter } from './llm/index.ts';
import { HarnessError, LlmService } from './llm/index.ts';
import { LoopAgent } from './loop/index.ts';
import { SystemPromptAssembler } from './prompt/index.ts';
import type { Session, SessionStore } from './session/index.ts';
import { MemorySessionStore, sessionEventModes } from './session/index.ts';
import type { Tool } from './tools/index.ts';
import { ApprovalService, ToolPipeline, ToolRegistry } from './tools/index.ts';
import { saveTranscriptCarries } from './transcript/transcript-carries.ts';
import { defaultRecordViews } from './record-views.ts';

/** Options of `createHarness`. */
export interface HarnessOptions {
  /** Where sessions live; in memory by default. */
  store?: SessionStore;
  /** Model adapters to register. */
  providers?: readonly LlmAdapter[];
  /** Tools to register. */
  tools?: readonly Tool<never>[];
  /** Plugins to attach, in order. */
  plugins?: readonly HarnessPlugin[];
  /** Bound of the rolling pool of parallel tool calls; 10 by default. */
  maxParallelToolCalls?: number;
  /** The driver that implements Agent; the default loop when omitted. */
  driver?: AgentDriver;
  /** The base system instructions. */
  baseInstructions?: string;
  /** Receives failures of emit-mode listeners (contained, never fatal). */
  onListenerError?: ListenerErrorReporter;
  /** Provider and model new agents use when their options name none. */
  defaultModel?: { provider: string; model: string };
}

const defaultDriver: AgentDriver = (services, session, options) => new LoopAgent(services, session, options);

/** The composed harness: hook bus, services, store, registry and the driver that makes agents. */
export class Harness implements PluginHost {
  readonly hooks: HookBus;
  readonly llm: LlmService;
  readonly tools: ToolRegistry;
  readonly pipeline: ToolPipeline;
  readonly approvals: ApprovalService;
  readonly prompt: SystemPromptAssembler;
  readonly agents: AgentRegistry;
  readonly store: SessionStore;
  readonly maxParallelToolCalls: number;
  defaultModel: { provider: string; model: string } | undefined;
  readonly #driver: AgentDriver;
  readonly #pluginDisposers: Disposer[] = [];

  constructor(options: HarnessOptions = {}) {
    const bound = options.maxParallelToolCalls ?? 10;
    if (!Number.isSafeInteger(bound) || bound < 1) {
      throw new HarnessError('INVALID_OPTIONS', 'maxParallelToolCalls must be a positive integer');
    }
    this.maxParallelToolCalls = bound;
    this.hooks = new HookBus(
      options.onListenerError !== undefined ? { reportError: options.onListenerError } : {},
    );
    this.hooks.declare(sessionEventModes);
    this.llm = new LlmService(this.hooks);
    this.tools = new ToolRegistry();
    this.approvals = new ApprovalService();
    this.pipeline = new ToolPipeline({ hooks: this.hooks, registry: this.tools, approvals: this.approvals });
    this.prompt = new SystemPromptAssembler({
      hooks: this.hooks,
      ...(options.baseInstructions !== undefined ? { baseInstructions: options.baseInstructions } : {}),
    });
    this.agents = new AgentRegistry(this.hooks);
    this.store = options.store ?? new MemorySessionStore();
    this.store.bind?.(this.hooks);
    this.#driver = options.driver ?? defaultDriver;
    this.defaultModel = options.defaultModel;
    for (const provider of options.providers ?? []) this.llm.register(provider);
    for (const tool of options.tools ?? []) this.tools.register(tool);
    for (const plugin of options.plugins ?? []) this.use(plugin);
  }

  /** Attaches a plugin. */
  use(plugin: HarnessPlugin): void {
    const disposer = plugin.setup(this);
    if (typeof disposer === 'function') this.#pluginDisposers.push(disposer);
  }

  get registry(): AgentRegistry {
    return this.agents;
  }

  /** The services every driver receives. */
  get services(): AgentServices {
    return {
      hooks: this.hooks,
      llm: this.llm,
      tools: this.tools,
      pipeline: this.pipeline,
      approvals: this.approvals,
      prompt: this.prompt,
      registry: this.agents,
      store: this.store,
      maxParallelToolCalls: this.maxParallelToolCalls,
    };
  }

  /** Creates an agent over a new session: store, then registry (`agent/created`), then `agent/session-start`. */
  async createAgent(options: AgentOptions = {}): Promise<Agent> {
    const resolved = this.#resolveOptions(options);
    const id = resolved.id ?? randomUUID();
    this.agents.assertAvailable(id);
    const header: Parameters<SessionStore['create']>[0] = { id };
    if (resolved.cwd !== undefined) header.cwd = resolved.cwd;
    if (resolved.parent !== undefined) {
      header.parentSession = resolved.parent.id;
      header.origin = 'subagent';
      header.delegationDepth = resolved.delegationDepth ?? 1;
      if (resolved.parentCallId !== undefined) header.parentCallId = resolved.parentCallId;
    }
    const session = await this.store.create(header);
    saveTranscriptCarries(session, defaultRecordViews);
    return this.#publish(this.#driver(this.services, session, { ...resolved, id }), 'startup');
  }

  /** Resumes a stored session (repairing an interrupted tail) as a live agent. */
  async resumeAgent(id: string, options: Omit<AgentOptions, 'id'> = {}): Promise<Agent> {
    this.agents.assertAvailable(id);
    const session = await this.store.open(id);
    saveTranscriptCarries(session, defaultRecordViews);
    // The loop goes on with the route the log last used; a log that never reached a request (a crash
    // before its first record was written) takes the default route like a new session.
    const resolved = this.#resolveOptions({ ...options, id }, !hasRequestRoute(session));
    if (resolved.cwd === undefined && session.header.cwd !== undefined) resolved.cwd = session.header.cwd;
    return this.#publish(this.#driver(this.services, session, resolved), 'resume');
  }

  /** Disposes every live agent and detaches the plugins. */
  async dispose(): Promise<void> {
    await Promise.all(this.agents.list().map((agent) => agent.dispose()));
    for (const disposer of this.#pluginDisposers.splice(0).reverse()) disposer();
  }

  #publish(agent: Agent, source: 'startup' | 'resume'): Agent {
    this.agents.add(agent);
    this.hooks.emit('agent/session-start', { agent, source }, agent.id);
    return agent;
  }

  #resolveOptions(options: AgentOptions, applyDefaultModel = true): AgentOptions {
    if (
      options.maxTokens !== undefined &&
      (!Number.isSafeInteger(options.maxTokens) || options.maxTokens <= 0)
    ) {
      throw new HarnessError('INVALID_OPTIONS', 'maxTokens must be a positive safe integer');
    }
    const bound = options.maxParallelToolCalls;
    if (bound !== undefined && (!Number.isSafeInteger(bound) || bound < 1)) {
      throw new HarnessError('INVALID_OPTIONS', 'maxParallelToolCalls must be a positive integer');
    }
    const resolved: AgentOptions = { ...options };
    if (
      applyDefaultModel &&
      resolved.provider === undefined &&
      resolved.model === undefined &&
      this.defaultModel
    ) {
      resolved.provider = this.defaultModel.provider;
      resolved.model = this.defaultModel.model;
    }
    return resolved;
  }
}

/** Composes a working harness: hooks, services, the default loop, and the given providers, tools and plugins. */
export function createHarness(options: HarnessOptions = {}): Harness {
  return new Harness(options);
}

/** True when the log records a request's route (`request/context`), which a resumed loop goes on with. */
function hasRequestRoute(session: Session): boolean {
  const log = session.log;
  for (let index = log.length - 1; index >= 0; index--)
    if (log.typeAt(index) === 'request/context') return true;
  return false;
}
