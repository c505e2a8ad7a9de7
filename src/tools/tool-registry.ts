import type { Disposer } from '../hooks/index.ts';
import type { ToolSchema } from '../llm/index.ts';
import { HarnessError } from '../llm/index.ts';
import type { Tool, ToolExecutionMode } from './tool.ts';
import { parseToolArguments, toolParametersSchema, validateToolArguments } from './tool-arguments.ts';

/** Which tools an agent sees: all, or a named subset. */
export type ToolSelection = readonly string[] | undefined;

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** Options of `ToolRegistry.register`. */
export interface ToolRegistrationOptions {
  /** The agent (session) id the tool is visible to alone; every agent sees it when omitted. */
  scope?: string;
}

/**
 * The registry of tool definitions shared by a harness's agents; a tool registered with a scope is
 * visible only to the agent with that id (per-session tool sources such as an editor's MCP servers).
 */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  readonly #scoped = new Map<string, Map<string, Tool>>();
  readonly #schemaCache = new Map<string, ToolSchema[]>();

  /**
   * Registers a tool; an invalid name, or one already visible where this tool would be (a shared tool,
   * or a tool of the same scope), throws `INVALID_TOOL`. Returns a disposer.
   */
  register(tool: Tool<never> | Tool, options: ToolRegistrationOptions = {}): Disposer {
    const definition = tool as Tool;
    const scope = options.scope;
    if (!toolNamePattern.test(definition.name)) {
      throw new HarnessError('INVALID_TOOL', `tool name '${definition.name}' must match ${toolNamePattern}`);
    }
    const taken =
      scope === undefined
        ? this.#tools.has(definition.name) ||
          [...this.#scoped.values()].some((tools) => tools.has(definition.name))
        : this.has(definition.name, scope);
    if (taken) {
      throw new HarnessError('INVALID_TOOL', `tool '${definition.name}' is already registered`);
    }
    let target = this.#tools;
    if (scope !== undefined) {
      target = this.#scoped.get(scope) ?? new Map<string, Tool>();
      this.#scoped.set(scope, target);
    }
    target.set(definition.name, definition);
    this.#schemaCache.clear();
    return () => {
      if (target.get(definition.name) !== definition) return;
      target.delete(definition.name);
      if (scope !== undefined && target.size === 0 && this.#scoped.get(scope) === target) {
        this.#scoped.delete(scope);
      }
      this.#schemaCache.clear();
    };
  }

  /** True when a tool of this name is visible in `scope` (shared tools are visible everywhere). */
  has(name: string, scope?: string): boolean {
    return this.#tools.has(name) || (scope !== undefined && this.#scoped.get(scope)?.has(name) === true);
  }

  /** The visible tool with this name, if any. */
  get(name: string, selection?: ToolSelection, scope?: string): Tool | undefined {
    if (selection !== undefined && !selection.includes(name)) return undefined;
    return this.#tools.get(name) ?? (scope !== undefined ? this.#scoped.get(scope)?.get(name) : undefined);
  }

  /** Every visible tool, in lexicographic name order. */
  list(selection?: ToolSelection, scope?: string): Tool[] {
    const scoped = scope !== undefined ? this.#scoped.get(scope) : undefined;
    const all =
      scoped === undefined ? [...this.#tools.values()] : [...this.#tools.values(), ...scoped.values()];
    return all
      .filter((tool) => selection === undefined || selection.includes(tool.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The schemas the model sees, lexicographic by name (never registration order); cached per selection and scope. */
  schemas(selection?: ToolSelection, scope?: string): ToolSchema[] {
    const scoped = scope !== undefined && this.#scoped.has(scope) ? scope : '';
    const key = `${scoped}\u0001${selection === undefined ? '*' : selection.join('\u0000')}`;
    const cached = this.#schemaCache.get(key);
    if (cached !== undefined) return cached;
    const schemas = this.list(selection, scope).map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: toolParametersSchema(tool),
    }));
    this.#schemaCache.set(key, schemas);
    return schemas;
  }

  /**
   * Classifies a call: parallel only when the visible tool's `isConcurrencySafe` returns literally `true`
   * for valid arguments; unknown tools, no classifier, throws, other values and invalid arguments are exclusive.
   */
  executionMode(
    name: string,
    rawArguments: string,
    selection?: ToolSelection,
    scope?: string,
  ): ToolExecutionMode {
    const tool = this.get(name, selection, scope);
    if (tool?.isConcurrencySafe === undefined) return { kind: 'exclusive' };
    const check = validateToolArguments(tool, parseToolArguments(rawArguments));
    if (!check.ok) return { kind: 'exclusive' };
    return this.classify(tool, check.value);
  }

  /** Classifies a call whose arguments were already validated: parallel only for a literal `true`. */
  classify(tool: Tool, validArguments: unknown): ToolExecutionMode {
    if (tool.isConcurrencySafe === undefined) return { kind: 'exclusive' };
    try {
      return tool.isConcurrencySafe(validArguments) === true ? { kind: 'parallel' } : { kind: 'exclusive' };
    } catch {
      // A throwing classifier means "not known to be safe": fail safe to exclusive.
      return { kind: 'exclusive' };
    }
  }
}
