import { McpError } from './mcp-error.ts';

/** A server Rein starts as a child process and talks to over its stdin/stdout. */
export interface McpStdioServerConfig {
  readonly type: 'stdio';
  readonly command: string;
  readonly args?: readonly string[];
  /** Variables added to the inherited environment of the process. */
  readonly env?: Readonly<Record<string, string>>;
  /** The working directory of the process; the workspace when omitted. */
  readonly cwd?: string;
  /** How long connecting and listing tools may take, in milliseconds (the plugin's default when omitted). */
  readonly startupTimeoutMs?: number;
  /** How long one call may run without progress, in milliseconds (the plugin's default when omitted). */
  readonly callTimeoutMs?: number;
}

/** A server reached over HTTP: Streamable HTTP (`http`, falling back to HTTP+SSE) or legacy HTTP+SSE (`sse`). */
export interface McpHttpServerConfig {
  readonly type: 'http' | 'sse';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly startupTimeoutMs?: number;
  readonly callTimeoutMs?: number;
}

/** How one MCP server is reached. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** Where a server's configuration came from, for `rein mcp list` and the UIs. */
export interface McpServerOrigin {
  /** `user`: Rein's config file; `project`: a project's `.mcp.json`; `session`: given for one agent; `sdk`: code. */
  readonly scope: 'user' | 'project' | 'session' | 'sdk';
  /** The file it was read from, when it was. */
  readonly file?: string;
}

/** A named server with its configuration and origin. */
export interface McpServerDefinition {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly origin?: McpServerOrigin;
}

/** The transports Rein knows, by the `type` field (a missing `type` with a `command` means `stdio`). */
export const mcpTransports = ['stdio', 'http', 'sse'] as const;

const variablePattern = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${VAR}` and `${VAR:-default}` in a string from `env`; an unset variable without a default
 * throws `MCP_INVALID_CONFIG` naming it (a secret that is missing should not be sent as an empty string).
 */
export function expandMcpVariables(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  where: string,
): string {
  return text.replace(variablePattern, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new McpError('MCP_INVALID_CONFIG', `${where}: environment variable ${name} is not set`);
  });
}

/** Options of `parseMcpServerConfig`. */
export interface ParseMcpServerOptions {
  /** The variables `${VAR}` expands from; `process.env` when omitted. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Named in error messages (a file path, or `session/new`). */
  where?: string;
  /** False to take strings as given (configurations whose values are already final); true by default. */
  expand?: boolean;
}

/**
 * Validates one `mcpServers` entry (the shape Claude Code's `.mcp.json` uses) and expands its
 * variables; throws `MCP_INVALID_CONFIG` saying which field is wrong.
 */
export function parseMcpServerConfig(
  name: string,
  raw: unknown,
  options: ParseMcpServerOptions = {},
): McpServerConfig {
  const env = options.env ?? process.env;
  const where = `${options.where !== undefined ? `${options.where}: ` : ''}mcpServers.${name}`;
  const fail = (message: string): never => {
    throw new McpError('MCP_INVALID_CONFIG', `${where}${message}`, { server: name });
  };
  if (name.trim() === '') fail(': the server name is empty');
  if (!isRecord(raw)) return fail(' must be an object');
  const type = raw.type ?? (raw.command !== undefined ? 'stdio' : raw.url !== undefined ? 'http' : undefined);
  if (type === undefined) return fail(' needs a "command" (stdio) or a "url" (http, sse)');
  if (typeof type !== 'string' || !(mcpTransports as readonly string[]).includes(type)) {
    return fail(`.type: unknown transport ${JSON.stringify(type)} (known: ${mcpTransports.join(', ')})`);
  }
  const timeouts: { startupTimeoutMs?: number; callTimeoutMs?: number } = {};
  for (const field of ['startupTimeoutMs', 'callTimeoutMs'] as const) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value > 0)) fail(`.${field} must be a positive number`);
    timeouts[field] = value as number;
  }
  const expand = (text: string, field: string): string =>
    options.expand === false ? text : expandMcpVariables(text, env, `${where}.${field}`);
  const stringMap = (field: string): Record<string, string> | undefined => {
    const value = raw[field];
    if (value === undefined) return undefined;
    if (!isRecord(value)) return fail(`.${field} must be an object of strings`);
    const result: Record<string, string> = {};
    for (const [key, entry] of Object.entries(value)) {
      if (typeof entry !== 'string') fail(`.${field}.${key} must be a string`);
      result[key] = expand(entry as string, `${field}.${key}`);
    }
    return result;
  };
  if (type === 'stdio') {
    if (typeof raw.command !== 'string' || raw.command.trim() === '') {
      return fail('.command must be a non-empty string');
    }
    const args = raw.args;
    if (args !== undefined && (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string'))) {
      fail('.args must be a list of strings');
    }
    if (raw.cwd !== undefined && typeof raw.cwd !== 'string') fail('.cwd must be a string');
    const env = stringMap('env');
    return {
      type: 'stdio',
      command: expand(raw.command, 'command'),
      ...(Array.isArray(args) ? { args: (args as string[]).map((arg, i) => expand(arg, `args[${i}]`)) } : {}),
      ...(env !== undefined ? { env } : {}),
      ...(typeof raw.cwd === 'string' ? { cwd: expand(raw.cwd, 'cwd') } : {}),
      ...timeouts,
    };
  }
  if (typeof raw.url !== 'string' || raw.url.trim() === '') return fail('.url must be a non-empty string');
  const url = expand(raw.url, 'url');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(`.url ${JSON.stringify(url)} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') fail('.url must be an http(s) URL');
  const headers = stringMap('headers');
  return {
    type: type as 'http' | 'sse',
    url,
    ...(headers !== undefined ? { headers } : {}),
    ...timeouts,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
