import type { Disposer } from '../../hooks/index.ts';
import type { ToolRegistry } from '../../tools/index.ts';
import { McpConnection } from './mcp-connection.ts';
import type { McpListedTool, McpServerState } from './mcp-connection.ts';
import type { McpOutputSettings } from './mcp-content.ts';
import type { McpErrorCode } from './mcp-error.ts';
import type { McpServerConfig, McpServerDefinition, McpServerOrigin } from './mcp-server-config.ts';
import type { McpToolInfo } from './mcp-tool.ts';
import { createMcpTool, mcpToolParameters } from './mcp-tool.ts';
import { mcpToolName } from './mcp-tool-name.ts';

/** A problem that stops nothing else: a skipped tool, a renamed tool, a server that failed to start. */
export interface McpWarning {
  readonly server: string;
  readonly code: 'MCP_TOOL_SKIPPED' | 'MCP_TOOL_RENAMED' | McpErrorCode;
  readonly message: string;
}

/** What a listing or a UI shows about one server. */
export interface McpServerStatus {
  readonly name: string;
  /**
   * `untrusted`: a project's server that is not started until the user trusts the project; `invalid`:
   * its configuration is wrong (see `error`).
   */
  readonly state: McpServerState | 'untrusted' | 'invalid';
  /** The transport, `unknown` for an invalid configuration that names none Rein knows. */
  readonly transport: McpServerConfig['type'] | 'unknown';
  readonly origin: McpServerOrigin;
  /** The agent (session) whose own server this is; absent for servers every agent shares. */
  readonly agent?: string;
  readonly tools: readonly McpToolInfo[];
  /** The server's own name and version, once it answered `initialize`. */
  readonly serverInfo?: { name: string; version: string };
  /** Why it is `failed` (or, for `untrusted`, what to do). */
  readonly error?: { code: string; message: string };
  /** Its last stderr lines (stdio). */
  readonly stderr?: readonly string[];
}

/** Settings every server of a set shares. */
export interface McpSetSettings {
  readonly cwd: string;
  readonly startupTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly output: McpOutputSettings;
  readonly warn: (warning: McpWarning) => void;
  /** Any server's state or tools changed. */
  readonly changed: () => void;
}

/**
 * A group of MCP servers whose tools are registered into one scope of the tool registry: the servers
 * every agent shares (no scope), or one agent's own servers (its id).
 */
export class McpServerSet {
  /** The agent the tools are visible to; undefined for every agent. */
  readonly scope: string | undefined;
  readonly #registry: ToolRegistry;
  readonly #settings: McpSetSettings;
  readonly #entries: {
    connection: McpConnection;
    origin: McpServerOrigin;
    infos: McpToolInfo[];
    unregister: Disposer[];
  }[] = [];
  #started: Promise<void> | undefined;

  constructor(options: {
    servers: readonly McpServerDefinition[];
    registry: ToolRegistry;
    scope?: string;
    settings: McpSetSettings;
  }) {
    this.scope = options.scope;
    this.#registry = options.registry;
    this.#settings = options.settings;
    for (const definition of options.servers) {
      const entry = {
        connection: undefined as unknown as McpConnection,
        origin: definition.origin ?? { scope: options.scope !== undefined ? 'session' : 'sdk' },
        infos: [] as McpToolInfo[],
        unregister: [] as Disposer[],
      };
      entry.connection = new McpConnection({
        name: definition.name,
        config: definition.config,
        cwd: options.settings.cwd,
        startupTimeoutMs: options.settings.startupTimeoutMs,
        callTimeoutMs: options.settings.callTimeoutMs,
        onTools: (tools) => this.#register(entry, tools),
        onState: () => options.settings.changed(),
      });
      this.#entries.push(entry);
    }
  }

  /** The server names of this set. */
  get names(): string[] {
    return this.#entries.map((entry) => entry.connection.name);
  }

  /**
   * Starts every server in parallel (once; later calls return the same promise); resolves when each
   * is ready or has failed, reporting each failure as a warning.
   */
  start(): Promise<void> {
    this.#started ??= Promise.all(
      this.#entries.map((entry) =>
        entry.connection.start().catch((error: unknown) => {
          const failure = entry.connection.lastError;
          this.#settings.warn({
            server: entry.connection.name,
            code: failure?.code ?? 'MCP_START_FAILED',
            message: failure?.message ?? String(error),
          });
        }),
      ),
    ).then(() => undefined);
    return this.#started;
  }

  /** Resolves once started (if started) and no tool-list refresh is pending. */
  async settled(): Promise<void> {
    if (this.#started === undefined) return;
    await this.#started;
    await Promise.all(this.#entries.map((entry) => entry.connection.settled()));
  }

  /** True when a start or a refresh may still change the tools. */
  get busy(): boolean {
    return this.#entries.some((entry) => entry.connection.state === 'starting');
  }

  /** The status of each server. */
  status(): McpServerStatus[] {
    return this.#entries.map(({ connection, origin, infos }) => {
      const error = connection.lastError;
      const info = connection.state === 'ready' ? connection.serverVersion : undefined;
      const stderr = connection.stderrTail;
      return {
        name: connection.name,
        state: connection.state,
        transport: connection.config.type,
        origin,
        ...(this.scope !== undefined ? { agent: this.scope } : {}),
        tools: [...infos],
        ...(info !== undefined ? { serverInfo: { name: info.name, version: info.version } } : {}),
        ...(connection.state === 'failed' && error !== undefined
          ? { error: { code: error.code, message: error.message } }
          : {}),
        ...(stderr.length > 0 ? { stderr } : {}),
      };
    });
  }

  /** Unregisters the tools and shuts every server down. */
  async close(): Promise<void> {
    for (const entry of this.#entries) this.#unregister(entry);
    await Promise.all(this.#entries.map((entry) => entry.connection.close()));
    this.#settings.changed();
  }

  #unregister(entry: { unregister: Disposer[]; infos: McpToolInfo[] }): void {
    for (const dispose of entry.unregister.splice(0)) dispose();
    entry.infos = [];
  }

  #register(
    entry: { connection: McpConnection; infos: McpToolInfo[]; unregister: Disposer[] },
    tools: readonly McpListedTool[],
  ): void {
    this.#unregister(entry);
    const server = entry.connection.name;
    const chosen = new Set<string>();
    for (const listed of tools) {
      const parameters = mcpToolParameters(listed);
      if ('problem' in parameters) {
        this.#settings.warn({
          server,
          code: 'MCP_TOOL_SKIPPED',
          message: `MCP server ${server}: tool ${JSON.stringify(listed.name)} is skipped: ${parameters.problem}`,
        });
        continue;
      }
      const taken = (name: string): boolean => chosen.has(name) || this.#registry.has(name, this.scope);
      const name = mcpToolName(server, listed.name, taken);
      const plain = mcpToolName(server, listed.name, () => false);
      if (name !== plain && plain.length <= 64) {
        this.#settings.warn({
          server,
          code: 'MCP_TOOL_RENAMED',
          message: `MCP server ${server}: tool ${JSON.stringify(listed.name)} is called ${name}, as ${plain} is taken`,
        });
      }
      const { tool, info } = createMcpTool({
        name,
        listed,
        schema: parameters.schema,
        connection: entry.connection,
        output: this.#settings.output,
      });
      try {
        entry.unregister.push(
          this.#registry.register(tool, this.scope !== undefined ? { scope: this.scope } : {}),
        );
      } catch (error) {
        this.#settings.warn({
          server,
          code: 'MCP_TOOL_SKIPPED',
          message: `MCP server ${server}: tool ${JSON.stringify(listed.name)} is skipped: ${(error as Error).message}`,
        });
        continue;
      }
      chosen.add(name);
      entry.infos.push(info);
    }
    this.#settings.changed();
  }
}
