import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { HarnessPlugin } from './agent/index.ts';
import type { ReinConfig } from './config/index.ts';
import {
  ConfigError,
  configuredModelLookup,
  createConfiguredProviders,
  describeUnknownConfigKeys,
  describeProviders,
  loadReinConfig,
  reinConfigPath,
  reinHome,
  resolveModelId,
} from './config/index.ts';
import { chosenModel } from './app-default-route.ts';
import { Harness } from './harness.ts';
import type { LlmAdapter } from './llm/index.ts';
import { HarnessError } from './llm/index.ts';
import { DemoProvider, demoModelId, demoProviderId } from './providers/demo/index.ts';
import type { BudgetsPluginOptions } from './plugins/budgets/index.ts';
import { budgetsPlugin, pricingLookup } from './plugins/budgets/index.ts';
import { compactionPlugin } from './plugins/compaction/index.ts';
import { goalsPlugin } from './plugins/goals/index.ts';
import type { PermissionMode, PermissionRule } from './plugins/permissions/index.ts';
import { permissionModes, permissionsPlugin } from './plugins/permissions/index.ts';
import { retryPlugin } from './plugins/retry/index.ts';
import { repetitionGuardPlugin } from './plugins/repetition-guard/index.ts';
import { subagentsPlugin } from './plugins/subagents/index.ts';
import type { McpPlugin, McpPluginOptions } from './plugins/mcp/index.ts';
import { appMcpServers } from './app-mcp-servers.ts';
import { mcpPlugin } from './plugins/mcp/index.ts';
import { agentsMdPlugin } from './prompt/index.ts';
import type { PricingLookup, SessionStore } from './session/index.ts';
import { openSessionStore } from './session/stores/index.ts';
import type { Tool } from './tools/index.ts';
import type { EditorFiles, SandboxSettings } from './tools/builtin/index.ts';
import { builtinTools, sandboxStatus } from './tools/builtin/index.ts';
import type { ReinWarning } from './rein-warning.ts';

/** Options of `createReinHarness`. */
export interface ReinHarnessOptions {
  /** Rein's home (config, sessions); `REIN_HOME` or `~/.rein` when omitted. */
  home?: string;
  /** The workspace new agents work in (an existing directory). */
  cwd: string;
  /** The default route as `provider/model`; the configured default, or the offline demo without a key. */
  model?: string;
  /** The approval mode; `ask` when omitted. */
  approve?: PermissionMode;
  /** The environment keys and base URLs are read from; `process.env` when omitted. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Where sessions live: a store, or a selection (`disk`, or a `postgres://` URL for the PostgreSQL
   * store); `REIN_STORE`, else the disk store under `<home>/sessions`, when omitted.
   */
  store?: SessionStore | string;
  /** Allow/deny rules of the approval policy (deny wins). */
  rules?: readonly PermissionRule[];
  /** Per-turn and per-session limits on tokens, cost and steps; none by default. */
  budgets?: BudgetsPluginOptions;
  /** Extra model adapters, registered after the configured ones. */
  providers?: readonly LlmAdapter[];
  /** Extra tools, registered after the built-in ones. */
  tools?: readonly Tool<never>[];
  /** Extra plugins, attached after the app's own. */
  plugins?: readonly HarnessPlugin[];
  /** Bound of the rolling pool of parallel tool calls; 10 by default. */
  maxParallelToolCalls?: number;
  /** How `bash` is sandboxed in the `sandbox` approval mode (network, extra hidden paths, `bwrap`). */
  sandbox?: SandboxSettings;
  /** An editor the built-in file tools read and write through, for the sessions it serves. */
  editorFiles?: EditorFiles;
  /** MCP: `false` to run no configured server; otherwise timeouts and a warning listener. */
  mcp?: false | Pick<McpPluginOptions, 'startupTimeoutMs' | 'callTimeoutMs' | 'onWarning'>;
  /**
   * For commands that only read stored sessions: a config file that cannot be read or is invalid is
   * reported in `warnings` (code `CONFIG_IGNORED`) and left out (no configured providers), instead of
   * failing.
   */
  tolerateBrokenConfig?: boolean;
}

/** A provider/model pair. */
export interface ModelRoute {
  provider: string;
  model: string;
}

/** Parses `provider/model`; throws HarnessError `INVALID_MODEL` for anything else. */
export function parseModelRoute(text: string): ModelRoute {
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1) {
    throw new HarnessError(
      'INVALID_MODEL',
      `model '${text}' must be written provider/model, e.g. deepseek/deepseek-chat`,
    );
  }
  return { provider: text.slice(0, slash), model: text.slice(slash + 1) };
}

/** Rein's home directory: the option, else the config module's `reinHome` (`REIN_HOME`, `~/.rein`); absolute. */
export function resolveReinHome(
  home: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return home !== undefined ? resolve(home) : reinHome(env);
}

/** Where the app keeps its sessions: `<home>/sessions`. */
export function reinSessionsDirectory(home: string): string {
  return join(home, 'sessions');
}

/**
 * The application harness the CLI and the Web UI run: the default harness plus Rein's home, the
 * resolved default route (the offline demo when no provider key is configured), and the notices a
 * front end should show the user (e.g. that the demo is in use).
 */
export class ReinHarness extends Harness {
  /** Rein's home directory. */
  readonly home: string;
  /** The workspace new agents work in. */
  readonly cwd: string;
  /** The approval mode the permissions policy enforces. */
  readonly approvalMode: PermissionMode;
  /** True when the default route is the offline demo model. */
  readonly usingDemo: boolean;
  /** What the user should be told about this composition (one sentence each). */
  readonly notices: readonly string[];
  /**
   * What the user must be told on every start, in the order found: the sandbox mode fell back to `ask`
   * (loud), the config file was ignored, or has keys Rein does not read.
   */
  readonly warnings: readonly ReinWarning[];
  /** The MCP client: the configured servers' status, and `attach` to give one agent its own servers. */
  readonly mcp: McpPlugin;
  /** The MCP part of `notices` (broken files, invalid entries, untrusted project servers). */
  readonly mcpNotices: readonly string[];
  readonly #env: Readonly<Record<string, string | undefined>>;
  // Providers that do not come from the configuration (the demo, extra adapters): never reloaded.
  readonly #localProviders: ReadonlySet<string>;
  readonly #ownsStore: boolean;

  constructor(
    options: ConstructorParameters<typeof Harness>[0] & {
      home: string;
      cwd: string;
      approvalMode: PermissionMode;
      usingDemo: boolean;
      notices: readonly string[];
      warnings?: readonly ReinWarning[];
      env: Readonly<Record<string, string | undefined>>;
      localProviders: readonly string[];
      /** The store was opened from a selection: disposing the harness closes it. */
      ownsStore?: boolean;
      mcp: McpPlugin;
      mcpNotices: readonly string[];
    },
  ) {
    super(options);
    this.#ownsStore = options.ownsStore === true;
    this.mcp = options.mcp;
    this.mcpNotices = options.mcpNotices;
    this.home = options.home;
    this.cwd = options.cwd;
    this.approvalMode = options.approvalMode;
    this.usingDemo = options.usingDemo;
    this.notices = options.notices;
    this.warnings = options.warnings ?? [];
    this.#env = options.env;
    this.#localProviders = new Set(options.localProviders);
  }

  /**
   * Disposes every live agent and the plugins, waits until every MCP server has shut down, then closes
   * the store when it was opened from a selection (a database).
   */
  override async dispose(): Promise<void> {
    try {
      await super.dispose();
      await this.mcp.close();
    } finally {
      if (this.#ownsStore) await this.store.close?.();
    }
  }

  /**
   * Reads the configuration and the environment again and registers every callable configured
   * provider afresh, so a key saved meanwhile (the Web UI's settings, `rein config set-key`) serves the
   * next request without a restart; requests already streaming finish on the adapter they started
   * with. Returns the configured providers now registered.
   */
  async reloadProviders(): Promise<string[]> {
    const config = await loadReinConfig(this.home);
    const { providers } = createConfiguredProviders({ env: this.#env, config });
    const registered: string[] = [];
    for (const adapter of providers) {
      if (this.#localProviders.has(adapter.provider)) continue;
      this.llm.register(adapter, { replace: true });
      registered.push(adapter.provider);
    }
    return registered;
  }

  /**
   * Throws HarnessError `PROMPT_TOO_LARGE` when a prompt alone measures more tokens than the route's
   * whole context window (about four characters a token): such a request can never succeed, so it is
   * refused before anything is sent or logged, with the numbers and what to do instead.
   */
  assertPromptFits(text: string, route: ModelRoute = this.route): void {
    let contextWindow: number | undefined;
    try {
      contextWindow = this.llm.prepare({ provider: route.provider, model: route.model }).model?.contextWindow;
    } catch (error) {
      // An unknown route has no window to measure against; sending reports the route itself.
      if (error instanceof HarnessError) return;
      throw error;
    }
    if (contextWindow === undefined) return;
    const tokens = Math.ceil(text.length / 4);
    if (tokens <= contextWindow) return;
    const megabytes = (Buffer.byteLength(text) / 1_000_000).toFixed(1);
    throw new HarnessError(
      'PROMPT_TOO_LARGE',
      `the prompt is about ${tokens.toLocaleString('en-US')} tokens (${megabytes} MB), ` +
        `${(tokens / contextWindow).toFixed(1)}× the ${contextWindow.toLocaleString('en-US')}-token context window of ` +
        `${route.provider}/${route.model}, so it was not sent. Save it as a file in the workspace and ask the model ` +
        'to read what it needs from it (e.g. "summarize notes.txt"): tool reads are bounded and compaction can work on them.',
    );
  }

  /** The default route, which always exists for the app harness. */
  get route(): ModelRoute {
    return this.defaultModel!;
  }

  /**
   * Checks that a route names a registered provider and a model it knows; throws HarnessError
   * `UNKNOWN_PROVIDER` / `UNKNOWN_MODEL` listing what is configured.
   */
  assertRoute(route: ModelRoute): void {
    const adapter = this.llm.adapter(route.provider);
    if (adapter === undefined) {
      throw new HarnessError(
        'UNKNOWN_PROVIDER',
        `no provider '${route.provider}' is configured (configured: ${this.llm.providers().join(', ') || 'none'})`,
      );
    }
    const known = adapter.listModels?.() ?? [];
    if (
      known.length > 0 &&
      !known.includes(route.model) &&
      adapter.describeModel?.(route.model) === undefined
    ) {
      throw new HarnessError(
        'UNKNOWN_MODEL',
        `provider '${route.provider}' has no model '${route.model}' (known: ${known.join(', ')})`,
      );
    }
    this.llm.prepare({ provider: route.provider, model: route.model });
  }
}

/** Composes the full application harness used by the `rein` command and the Web UI server. */
export async function createReinHarness(options: ReinHarnessOptions): Promise<ReinHarness> {
  const env = options.env ?? process.env;
  const home = resolveReinHome(options.home, env);
  const cwd = resolve(options.cwd);
  assertDirectory(cwd);
  let approvalMode = options.approve ?? 'ask';
  if (!permissionModes.includes(approvalMode)) {
    throw new HarnessError(
      'INVALID_OPTIONS',
      `approval mode '${String(approvalMode)}' is not one of ${permissionModes.join(', ')}`,
    );
  }
  const notices: string[] = [];
  const warnings: ReinWarning[] = [];
  if (approvalMode === 'sandbox') {
    const status = sandboxStatus(options.sandbox?.bwrap ?? present(env['REIN_BWRAP']));
    if (!status.available) {
      approvalMode = 'ask';
      warnings.push({
        code: 'SANDBOX_UNAVAILABLE',
        source: 'sandbox',
        loud: true,
        message:
          `the sandbox approval mode is not available: ${status.detail}. Rein falls back to the ask ` +
          'mode: every command asks before it runs (rein doctor shows the sandbox check).',
      });
    }
  }
  let config: ReinConfig;
  let configured: LlmAdapter[];
  try {
    config = await loadReinConfig(home);
    configured = createConfiguredProviders({ env, config }).providers;
  } catch (error) {
    if (options.tolerateBrokenConfig !== true || !(error instanceof ConfigError)) throw error;
    config = {};
    configured = [];
    warnings.push({
      code: 'CONFIG_IGNORED',
      source: 'config',
      loud: false,
      message: `${error.message}; it is ignored for this command (fix it with: rein config edit)`,
    });
  }
  for (const message of describeUnknownConfigKeys(config, reinConfigPath(home))) {
    warnings.push({ code: 'CONFIG_UNKNOWN_KEY', source: 'config', loud: false, message });
  }
  const inputs = { env, config };
  let harness: ReinHarness | undefined;
  const demo = new DemoProvider({
    cwd: (sessionId) =>
      (sessionId !== undefined ? harness?.agents.get(sessionId)?.options.cwd : undefined) ?? cwd,
    ...demoDelay(env),
  });
  const extra = options.providers ?? [];
  const providers = [...configured, demo, ...extra];
  const chosen = chosenModel(options.model, inputs);
  let route: ModelRoute;
  if (chosen !== undefined) {
    route = parseModelRoute(chosen);
    // Configured vendors are checked against the configuration (unknown model, missing key naming its variable).
    const local =
      route.provider === demoProviderId || extra.some((adapter) => adapter.provider === route.provider);
    if (!local) {
      try {
        const { warning } = resolveModelId(chosen, inputs);
        if (warning !== undefined) notices.push(warning);
      } catch (error) {
        if (!(error instanceof HarnessError) || error.code !== 'UNKNOWN_PROVIDER') throw error;
        const known = [
          ...describeProviders(inputs).map((entry) => entry.provider),
          demoProviderId,
          ...extra.map((adapter) => adapter.provider),
        ];
        throw new HarnessError(
          'UNKNOWN_PROVIDER',
          `unknown provider '${route.provider}' (known: ${known.join(', ')}); add custom ones under "providers" in ${reinConfigPath(home)}`,
          { cause: error },
        );
      }
    }
  } else {
    route = { provider: demoProviderId, model: demoModelId };
    notices.push(
      `No provider key is configured, so Rein uses the offline demo model ${demoProviderId}/${demoModelId} ` +
        '(scripted, not a real model). Set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY to use a real one.',
    );
  }
  const usingDemo = route.provider === demoProviderId;
  const mcpServers =
    options.mcp === false
      ? { servers: [], untrusted: [], invalid: [], notices: [] }
      : await appMcpServers({ home, cwd, env });
  notices.push(...mcpServers.notices);
  const mcp = mcpPlugin({
    cwd,
    outputDirectory: join(home, 'tool-output'),
    servers: mcpServers.servers,
    untrusted: mcpServers.untrusted,
    invalid: mcpServers.invalid,
    ...(options.mcp !== false ? options.mcp : {}),
  });
  // Order matters on the shared waterfalls: the first plugin is the outermost listener.
  const plugins: HarnessPlugin[] = [
    permissionsPlugin({
      mode: approvalMode,
      workspace: cwd,
      reinHome: home,
      ...(options.rules !== undefined ? { rules: options.rules } : {}),
    }),
    agentsMdPlugin({ workspace: cwd }),
    compactionPlugin(),
    retryPlugin(),
    goalsPlugin(),
    subagentsPlugin(),
    repetitionGuardPlugin(),
    budgetsPlugin(options.budgets ?? {}),
    mcp,
    ...(options.plugins ?? []),
  ];
  const tools: Tool<never>[] = [
    ...builtinTools({
      workspace: cwd,
      reinHome: home,
      ...(approvalMode === 'sandbox'
        ? {
            sandbox: {
              ...options.sandbox,
              ...optionalBwrap(options.sandbox?.bwrap ?? present(env['REIN_BWRAP'])),
            },
          }
        : {}),
      ...(options.editorFiles !== undefined ? { editorFiles: options.editorFiles } : {}),
    }),
    ...(options.tools ?? []),
  ];
  // Session costs are priced through the registered adapters, which exist only once the harness does.
  let pricing: PricingLookup | undefined;
  // The configured providers are resolved once for the harness, not once per session priced.
  const configuredModel = configuredModelLookup(inputs);
  const ownsStore = typeof options.store !== 'object';
  const store: SessionStore =
    typeof options.store === 'object'
      ? options.store
      : await openSessionStore(options.store ?? env.REIN_STORE, {
          sessionsDirectory: reinSessionsDirectory(home),
          // A registered adapter knows its models best; without one (no key set now) the catalog and the
          // config still price what the log recorded.
          pricing: (provider, model) => {
            if (harness !== undefined) {
              pricing ??= pricingLookup(harness.llm);
              const found = pricing(provider, model);
              if (found !== undefined) return found;
            }
            return configuredModel(provider, model)?.pricing;
          },
        });
  harness = new ReinHarness({
    store,
    providers,
    tools,
    plugins,
    defaultModel: route,
    home,
    cwd,
    approvalMode,
    usingDemo,
    notices,
    warnings,
    env,
    localProviders: [demo.provider, ...extra.map((adapter) => adapter.provider)],
    ownsStore,
    mcp,
    mcpNotices: mcpServers.notices,
    ...(options.maxParallelToolCalls !== undefined
      ? { maxParallelToolCalls: options.maxParallelToolCalls }
      : {}),
  });
  try {
    harness.assertRoute(route);
  } catch (error) {
    await harness.dispose();
    throw error;
  }
  return harness;
}

function present(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}

function assertDirectory(path: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    throw new HarnessError(
      'INVALID_CWD',
      `cannot use ${path} as the working directory: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (!isDirectory) throw new HarnessError('INVALID_CWD', `${path} is not a directory`);
}

function demoDelay(env: Readonly<Record<string, string | undefined>>): { delayMs?: number } {
  const text = env.REIN_DEMO_DELAY_MS;
  if (text === undefined || text === '') return {};
  const value = Number(text);
  return Number.isFinite(value) && value >= 0 ? { delayMs: value } : {};
}

function optionalBwrap(bwrap: string | undefined): { bwrap?: string } {
  return bwrap !== undefined ? { bwrap } : {};
}
