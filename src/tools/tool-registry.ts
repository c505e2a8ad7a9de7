import type { Disposer } from '../hooks/index.ts';
import type { ToolSchema } from '../llm/index.ts';
import { HarnessError } from '../llm/index.ts';
import type { Tool, ToolExecutionMode } from './tool.ts';
import { checkToolArguments, toolParametersSchema } from './tool-arguments.ts';

/** Which tools an agent sees: all, or a named subset. */
export type ToolSelection = readonly string[] | undefined;

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** The registry of tool definitions shared by a harness's agents. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  #schemaCache: { key: string; schemas: ToolSchema[] } | undefined;

  /** Registers a tool; a duplicate or invalid name throws. Returns a disposer. */
  register(tool: Tool<never> | Tool): Disposer {
    const definition = tool as Tool;
    if (!toolNamePattern.test(definition.name)) {
      throw new HarnessError('INVALID_TOOL', `tool name '${definition.name}' must match ${toolNamePattern}`);
    }
    if (this.#tools.has(definition.name)) {
      throw new HarnessError('INVALID_TOOL', `tool '${definition.name}' is already registered`);
    }
    this.#tools.set(definition.name, definition);
    this.#schemaCache = undefined;
    return () => {
      if (this.#tools.get(definition.name) === definition) {
        this.#tools.delete(definition.name);
        this.#schemaCache = undefined;
      }
    };
  }

  /** The visible tool with this name, if any. */
  get(name: string, selection?: ToolSelection): Tool | undefined {
    if (selection !== undefined && !selection.includes(name)) return undefined;
    return this.#tools.get(name);
  }

  /** Every visible tool, in lexicographic name order. */
  list(selection?: ToolSelection): Tool[] {
    return [...this.#tools.values()]
      .filter((tool) => selection === undefined || selection.includes(tool.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The schemas the model sees, lexicographic by name (never registration order); cached per selection. */
  schemas(selection?: ToolSelection): ToolSchema[] {
    const key = selection === undefined ? '*' : selection.join('\u0000');
    if (this.#schemaCache?.key === key) return this.#schemaCache.schemas;
    const schemas = this.list(selection).map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: toolParametersSchema(tool),
    }));
    this.#schemaCache = { key, schemas };
    return schemas;
  }

  /**
   * Classifies a call: parallel only when the visible tool's `isConcurrencySafe` returns literally `true`
   * for valid arguments; unknown tools, no classifier, throws, other values and invalid arguments are exclusive.
   */
  executionMode(name: string, rawArguments: string, selection?: ToolSelection): ToolExecutionMode {
    const tool = this.get(name, selection);
    if (tool?.isConcurrencySafe === undefined) return { kind: 'exclusive' };
    const check = checkToolArguments(tool, rawArguments);
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
