import type { HookBus } from '../hooks/index.ts';
import { HarnessError } from '../llm/index.ts';
import type { Agent } from './agent.ts';
import { agentEventModes } from './agent-events.ts';

/** The live agents of a harness, by id; announces additions and removals. */
export class AgentRegistry {
  readonly #agents = new Map<string, Agent>();
  readonly #hooks: HookBus;

  constructor(hooks: HookBus) {
    this.#hooks = hooks;
    hooks.declare(agentEventModes);
  }

  /** True when a live agent holds this id. */
  has(id: string): boolean {
    return this.#agents.has(id);
  }

  /** Throws `AGENT_EXISTS` when a live agent holds this id. */
  assertAvailable(id: string): void {
    if (this.#agents.has(id))
      throw new HarnessError('AGENT_EXISTS', `an agent with id ${id} is already live`);
  }

  /** Publishes an agent (emits `agent/created`); a duplicate id throws. */
  add(agent: Agent): void {
    this.assertAvailable(agent.id);
    this.#agents.set(agent.id, agent);
    this.#hooks.emit('agent/created', { agent }, agent.id);
  }

  /** Removes an agent (emits `agent/disposed`). */
  remove(agent: Agent): void {
    if (this.#agents.get(agent.id) !== agent) return;
    this.#agents.delete(agent.id);
    this.#hooks.emit('agent/disposed', { agent }, agent.id);
  }

  /** The live agent with this id. */
  get(id: string): Agent | undefined {
    return this.#agents.get(id);
  }

  /** Every live agent. */
  list(): Agent[] {
    return [...this.#agents.values()];
  }
}
