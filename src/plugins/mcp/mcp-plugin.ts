import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessPlugin, PluginHost } from '../../agent/index.ts';
import type { Disposer } from '../../hooks/index.ts';
import type { OutputLimit } from '../../tools/builtin/index.ts';
import { McpError } from './mcp-error.ts';
import type { McpServerConfig, McpServerDefinition, McpServerOrigin } from './mcp-server-config.ts';
import { parseMcpServerConfig } from './mcp-server-config.ts';
import type { McpServerStatus, McpSetSettings, McpWarning } from './mcp-server-set.ts';
import { McpServerSet } from './mcp-server-set.ts';

/** A configured server that is not started because its project is not trusted yet. */
export interface McpUntrustedServer {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly origin: McpServerOrigin;
  /** What the user should do, e.g. "run `rein mcp trust` in /path". */
  readonly hint: string;
}

/** A configured server whose configuration is wrong: listed with its error, never started. */
export interface McpInvalidServer {
  readonly name: string;
  readonly origin: McpServerOrigin;
  readonly error: { readonly code: string; readonly message: string };
}

/** Servers given by name, or as definitions carrying their origin. */
export type McpServerList = Readonly<Record<string, McpServerConfig>> | readonly McpServerDefinition[];

/** Options of `mcpPlugin`. */
export interface McpPluginOptions {
  /** Servers every agent shares; started in parallel when the first agent is created. */
  servers?: McpServerList;
  /** Servers shown as `untrusted` and never started. */
  untrusted?: readonly McpUntrustedServer[];
  /** Servers shown as `invalid` and never started. */
  invalid?: readonly McpInvalidServer[];
  /** The workspace: stdio servers' default working directory and the root offered to servers. */
  cwd?: string;
  /** Where cut output is saved in full (a private folder); a folder under the system's temp dir by default. */
  outputDirectory?: string;
  /** The output cap, the same as the built-in tools' (30 000 bytes by default). */
  outputLimit?: OutputLimit;
  /** How long a server may take to start and list its tools; 30 s by default. */
  startupTimeoutMs?: number;
  /** How long one call may run without progress; 10 minutes by default. */
  callTimeoutMs?: number;
  /** Receives problems that stop nothing else (skipped tools, servers that failed to start). */
  onWarning?: (warning: McpWarning) => void;
}

/** One agent's own servers, attached with `McpPlugin.attach`. */
export interface McpAttachment {
  /** Resolves once each server is ready or has failed (failures are in `status()`, never a rejection). */
  readonly ready: Promise<void>;
  status(): McpServerStatus[];
  /** Unregisters the tools and shuts the servers down (also done when the agent is disposed). */
  close(): Promise<void>;
}

/** The MCP client plugin, with its servers' status and a way to give one agent its own servers. */
export interface McpPlugin extends HarnessPlugin {
  /**
   * Gives one agent (by id) its own servers (an editor's `session/new` servers): their tools are visible
   * to that agent alone, its next model request waits for them to start, and they are shut down when
   * it is disposed. Configurations are validated (`MCP_INVALID_CONFIG`); their strings are used as given.
   */
  attach(agentId: string, servers: McpServerList): McpAttachment;
  /** Starts the shared servers now (they otherwise start with the first agent); resolves when each settled. */
  start(): Promise<void>;
  /** Every server: shared, untrusted and attached. */
  status(): McpServerStatus[];
  /** The warnings so far (also given to `onWarning`). */
  warnings(): readonly McpWarning[];
  /** Registers a listener for status changes; returns its disposer. */
  onChange(listener: () => void): Disposer;
  /** Shuts every server down; awaited by hosts that must not leave processes behind. */
  close(): Promise<void>;
}

function definitions(
  list: McpServerList | undefined,
  scope: McpServerOrigin['scope'],
): McpServerDefinition[] {
  if (list === undefined) return [];
  const entries: McpServerDefinition[] = Array.isArray(list)
    ? [...(list as readonly McpServerDefinition[])]
    : Object.entries(list as Record<string, McpServerConfig>).map(([name, config]) => ({ name, config }));
  const seen = new Set<string>();
  return entries.map((entry) => {
    if (seen.has(entry.name)) {
      throw new McpError(
        'MCP_INVALID_CONFIG',
        `MCP server name ${JSON.stringify(entry.name)} is used twice`,
        {
          server: entry.name,
        },
      );
    }
    seen.add(entry.name);
    // Validates the shape for callers that are not type-checked; values are already expanded.
    const config = parseMcpServerConfig(entry.name, entry.config, { env: {}, expand: false });
    return { name: entry.name, config, origin: entry.origin ?? { scope } };
  });
}

/**
 * The MCP client plugin: the shared servers start in parallel when the first agent is created, and
 * every agent's model request waits until each has started or failed (within its start-up timeout)
 * and any tool-list refresh is done, so the request header records the tools the model saw.
 */
export function mcpPlugin(options: McpPluginOptions = {}): McpPlugin {
  const shared = definitions(options.servers, 'sdk');
  const untrusted = options.untrusted ?? [];
  const warnings: McpWarning[] = [];
  const listeners = new Set<() => void>();
  const attached = new Map<string, McpServerSet[]>();
  let host: PluginHost | undefined;
  let sharedSet: McpServerSet | undefined;
  let closed = false;
  const settings = (): McpSetSettings => ({
    cwd: options.cwd ?? process.cwd(),
    startupTimeoutMs: options.startupTimeoutMs ?? 30_000,
    callTimeoutMs: options.callTimeoutMs ?? 600_000,
    output: {
      outputDirectory: options.outputDirectory ?? join(tmpdir(), 'rein-mcp-output'),
      ...(options.outputLimit !== undefined ? { outputLimit: options.outputLimit } : {}),
    },
    warn: (warning) => {
      // A restarted server lists the same broken tool again: it is reported once.
      if (warnings.some((seen) => seen.server === warning.server && seen.message === warning.message)) return;
      warnings.push(warning);
      options.onWarning?.(warning);
      changed();
    },
    changed,
  });
  const changed = (): void => {
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // A status listener's failure is its own; the servers are unaffected.
      }
    }
  };
  const requireHost = (): PluginHost => {
    if (host === undefined) throw new McpError('MCP_CLOSED', 'the MCP plugin is not set up on a harness');
    if (closed) throw new McpError('MCP_CLOSED', 'the MCP plugin is shut down');
    return host;
  };
  const startShared = (): Promise<void> => {
    const services = requireHost();
    sharedSet ??= new McpServerSet({ servers: shared, registry: services.tools, settings: settings() });
    return sharedSet.start();
  };

  const plugin: McpPlugin = {
    name: 'mcp',
    setup(pluginHost) {
      host = pluginHost;
      const disposers: Disposer[] = [];
      if (shared.length > 0) {
        disposers.push(
          pluginHost.hooks.on('agent/created', () => {
            void startShared();
          }),
        );
      }
      disposers.push(
        pluginHost.hooks.on('agent/request', async (payload, next) => {
          const own = attached.get(payload.agent.id);
          if (sharedSet === undefined && own === undefined) return next();
          await abortable(
            Promise.all([sharedSet?.settled(), ...(own ?? []).map((set) => set.settled())]),
            payload.signal,
          );
          return next();
        }),
        pluginHost.hooks.on('agent/disposed', ({ agent }) => {
          const sets = attached.get(agent.id);
          attached.delete(agent.id);
          for (const set of sets ?? []) void set.close();
        }),
      );
      return () => {
        for (const dispose of disposers) dispose();
        void plugin.close();
      };
    },
    attach(agentId, servers) {
      const services = requireHost();
      const set = new McpServerSet({
        servers: definitions(servers, 'session'),
        registry: services.tools,
        scope: agentId,
        settings: settings(),
      });
      attached.set(agentId, [...(attached.get(agentId) ?? []), set]);
      const ready = set.start();
      changed();
      return {
        ready,
        status: () => set.status(),
        close: async () => {
          const remaining = (attached.get(agentId) ?? []).filter((other) => other !== set);
          if (remaining.length > 0) attached.set(agentId, remaining);
          else attached.delete(agentId);
          await set.close();
        },
      };
    },
    start: startShared,
    status() {
      const untrustedStatus: McpServerStatus[] = untrusted.map((server) => ({
        name: server.name,
        state: 'untrusted',
        transport: server.config.type,
        origin: server.origin,
        tools: [],
        error: { code: 'MCP_SERVER_UNTRUSTED', message: server.hint },
      }));
      const sharedStatus =
        sharedSet?.status() ??
        shared.map((server) => ({
          name: server.name,
          state: 'idle' as const,
          transport: server.config.type,
          origin: server.origin ?? { scope: 'sdk' as const },
          tools: [],
        }));
      const invalidStatus: McpServerStatus[] = (options.invalid ?? []).map((server) => ({
        name: server.name,
        state: 'invalid',
        transport: 'unknown',
        origin: server.origin,
        tools: [],
        error: { code: server.error.code, message: server.error.message },
      }));
      return [
        ...sharedStatus,
        ...untrustedStatus,
        ...invalidStatus,
        ...[...attached.values()].flat().flatMap((set) => set.status()),
      ];
    },
    warnings: () => [...warnings],
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      const sets = [...(sharedSet !== undefined ? [sharedSet] : []), ...[...attached.values()].flat()];
      attached.clear();
      await Promise.all(sets.map((set) => set.close()));
    },
  };
  return plugin;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
