import type { Agent, Harness, McpServerStatus } from '../internal.ts';

/** What the settings panel shows about one provider's key: never the key itself. */
export interface ProviderKeyStatus {
  provider: string;
  configured: boolean;
  /** Where the key comes from, e.g. `config` or `env:DEEPSEEK_API_KEY`. */
  source?: string;
  /** The last four characters, so a user can tell two keys apart. */
  hint?: string;
}

/** The settings view the browser receives. */
export interface SettingsView {
  providers: ProviderKeyStatus[];
  approvalMode?: string;
  approvalModes?: string[];
  /** Where the configuration lives, for the help text. */
  configPath?: string;
  /** How to add a key from a terminal, shown when no key is configured. */
  help?: string;
}

/** The config seam the settings panel writes through (Rein's config module implements it). */
export interface ServerSettings {
  describe(): Promise<SettingsView> | SettingsView;
  /** Stores a provider key (0600 file); the server never sends it back. */
  setProviderKey?(provider: string, key: string): Promise<void> | void;
  setApprovalMode?(mode: string): Promise<void> | void;
}

/**
 * Manual compaction of an idle agent, holding the agent's maintenance slot itself (the compaction
 * module's `compactSession(host, agent)` does); rejects with `AGENT_BUSY` while the agent runs.
 */
export type CompactSession = (agent: Agent) => Promise<unknown>;

/** Options of `startReinServer`. */
export interface ReinServerOptions {
  /** The harness whose agents the server drives (`createHarness` or the app preset). */
  harness: Harness;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** A loopback address; `127.0.0.1` by default. */
  host?: string;
  /** The launch token; random per launch when omitted. */
  token?: string;
  /** Rein's home directory, shown in the settings panel. */
  home?: string;
  /** The built UI to serve; `web/dist` of this package by default. */
  webRoot?: string;
  /** Closes the server when aborted. */
  signal?: AbortSignal;
  /** The working directory new sessions get when the browser names none. */
  cwd?: string;
  /**
   * The one directory the harness's tools work in, when they are bound to one (the app preset's built-in
   * tools and approval policy are): a session working elsewhere is then refused with
   * `WORKSPACE_MISMATCH` (409) when it would be created, resumed or sent to here; it stays readable.
   */
  workspace?: string;
  settings?: ServerSettings;
  compact?: CompactSession;
  /** The MCP servers to show (`ReinHarness.mcp`); none when omitted. */
  mcp?: { status(): McpServerStatus[] };
  /** Live events a slow browser may owe before they collapse into a resync (default 512). */
  liveEventLimit?: number;
  /** How long a session keeps its approver after its last browser disconnected (default 15 s). */
  approverGraceMs?: number;
  /** How long a client may take to send a request's headers before it is cut off (default 5 s). */
  headersTimeoutMs?: number;
  /** How long a client may take to send a whole request, body included (default 30 s). */
  requestTimeoutMs?: number;
}

/** A running server. */
export interface ReinServer {
  /** The URL to open, with the token: `http://127.0.0.1:PORT/?token=…`. */
  url: string;
  token: string;
  port: number;
  /** Stops accepting, ends every stream, detaches approvers; the harness stays the caller's. */
  close(): Promise<void>;
}
