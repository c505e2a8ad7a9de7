import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from './config-error.ts';
import { reinConfigPath } from './rein-config.ts';

/** The file name of a project's MCP servers (the `.mcp.json` other agents read too). */
export const mcpProjectFileName = '.mcp.json';

/** The `mcpServers` section of one file, entries not yet validated (the MCP plugin validates each). */
export interface McpConfigFile {
  readonly file: string;
  readonly servers: Readonly<Record<string, unknown>>;
}

/** A project's `.mcp.json`, with whether the user trusts it. */
export interface McpProjectConfig extends McpConfigFile {
  /** The project directory (where the file is), canonical. */
  readonly directory: string;
  /** A hash of the file's `mcpServers`: trust covers exactly these servers. */
  readonly fingerprint: string;
  /** True when the user trusted this directory with these servers. */
  readonly trusted: boolean;
  /** True when the directory was trusted, but its servers changed since. */
  readonly changedSinceTrust: boolean;
}

/** A file that could not be used, with a message giving the position of the error. */
export interface McpConfigProblem {
  readonly file: string;
  readonly code: 'INVALID_CONFIG';
  readonly message: string;
}

/** What `loadMcpConfig` found. */
export interface McpConfigSources {
  /** `mcpServers` of Rein's config file, if it has any. */
  readonly user?: McpConfigFile;
  /** The nearest `.mcp.json` from the workspace up to its repository root, if any. */
  readonly project?: McpProjectConfig;
  readonly problems: readonly McpConfigProblem[];
}

interface TrustFile {
  projects: Record<string, { fingerprint: string; trustedAt: string }>;
}

/** The file recording which project directories' MCP servers the user trusts. */
export function mcpTrustPath(home: string): string {
  return join(home, 'mcp-trust.json');
}

/** Where a JSON.parse failure happened, as `line L, column C`, from the offset V8 reports. */
function positionOf(text: string, error: Error): string {
  const lineColumn = /line (\d+) column (\d+)/.exec(error.message);
  if (lineColumn !== null) return `line ${lineColumn[1]}, column ${lineColumn[2]}`;
  const offset = /position (\d+)/.exec(error.message);
  const at = offset !== null ? Number(offset[1]) : text.length;
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

/** Parses a JSON file's text; a syntax error becomes a message with the file, line and column. */
export function parseJsonWithPosition(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = (error as Error).message.replace(/\s*\(line \d+ column \d+\)$/, '');
    throw new ConfigError(
      'INVALID_CONFIG',
      `${file}: invalid JSON at ${positionOf(text, error as Error)}: ${reason}`,
      { cause: error },
    );
  }
}

function serversOf(value: unknown, file: string): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError('INVALID_CONFIG', `${file}: the top level must be a JSON object`);
  }
  const servers = (value as Record<string, unknown>).mcpServers;
  if (servers === undefined) return undefined;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new ConfigError('INVALID_CONFIG', `${file}: mcpServers must be an object of servers by name`);
  }
  return servers as Record<string, unknown>;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw new ConfigError('INVALID_CONFIG', `cannot read ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The nearest `.mcp.json` from `cwd` up to the first directory holding `.git` (or the filesystem root). */
export function findMcpProjectFile(cwd: string): string | undefined {
  let directory = resolve(cwd);
  for (;;) {
    const candidate = join(directory, mcpProjectFileName);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(directory);
    if (existsSync(join(directory, '.git')) || parent === directory) return undefined;
    directory = parent;
  }
}

function fingerprintOf(servers: Readonly<Record<string, unknown>>): string {
  return createHash('sha256').update(canonicalJson(servers)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

async function readTrust(home: string): Promise<TrustFile> {
  const file = mcpTrustPath(home);
  const text = await readOptional(file);
  if (text === undefined) return { projects: {} };
  const value = parseJsonWithPosition(text, file) as Partial<TrustFile> | null;
  const projects = value?.projects;
  if (typeof projects !== 'object' || projects === null || Array.isArray(projects)) {
    throw new ConfigError('INVALID_CONFIG', `${file}: projects must be an object`);
  }
  return { projects };
}

async function readProject(home: string, file: string): Promise<McpProjectConfig | undefined> {
  const text = await readOptional(file);
  if (text === undefined) return undefined;
  const servers = serversOf(parseJsonWithPosition(text, file), file) ?? {};
  const directory = realpathSync(dirname(file));
  const fingerprint = fingerprintOf(servers);
  const record = (await readTrust(home)).projects[directory];
  return {
    file,
    servers,
    directory,
    fingerprint,
    trusted: record?.fingerprint === fingerprint,
    changedSinceTrust: record !== undefined && record.fingerprint !== fingerprint,
  };
}

/**
 * Reads the MCP servers configured for a workspace: `mcpServers` of Rein's config file and of the
 * project's `.mcp.json`, and whether the project is trusted. A broken file is reported in `problems`
 * (with the position of the error) and contributes no servers; it never stops the other file.
 */
export async function loadMcpConfig(options: { home: string; cwd: string }): Promise<McpConfigSources> {
  const problems: McpConfigProblem[] = [];
  const note = (file: string, error: unknown): void => {
    if (!(error instanceof ConfigError)) throw error;
    problems.push({ file, code: 'INVALID_CONFIG', message: error.message });
  };
  let user: McpConfigFile | undefined;
  const userFile = reinConfigPath(options.home);
  try {
    const text = await readOptional(userFile);
    const servers =
      text !== undefined ? serversOf(parseJsonWithPosition(text, userFile), userFile) : undefined;
    if (servers !== undefined) user = { file: userFile, servers };
  } catch (error) {
    note(userFile, error);
  }
  let project: McpProjectConfig | undefined;
  const projectFile = findMcpProjectFile(options.cwd);
  if (projectFile !== undefined) {
    try {
      project = await readProject(options.home, projectFile);
    } catch (error) {
      note(projectFile, error);
    }
  }
  return {
    ...(user !== undefined ? { user } : {}),
    ...(project !== undefined ? { project } : {}),
    problems,
  };
}

/**
 * Trusts the MCP servers of the project's `.mcp.json` (found from `cwd` as `loadMcpConfig` finds it),
 * durably under Rein's home; a later change to its servers needs trusting again. Returns the project,
 * or throws ConfigError `INVALID_CONFIG` when there is no (valid) `.mcp.json`.
 */
export async function trustMcpProject(options: { home: string; cwd: string }): Promise<McpProjectConfig> {
  const file = findMcpProjectFile(options.cwd);
  if (file === undefined) {
    throw new ConfigError(
      'INVALID_CONFIG',
      `no ${mcpProjectFileName} in ${resolve(options.cwd)} or above it`,
    );
  }
  const project = await readProject(options.home, file);
  if (project === undefined) throw new ConfigError('INVALID_CONFIG', `${file} disappeared while it was read`);
  const trust = await readTrust(options.home);
  trust.projects[project.directory] = {
    fingerprint: project.fingerprint,
    trustedAt: new Date().toISOString(),
  };
  await mkdir(options.home, { recursive: true, mode: 0o700 });
  const path = mcpTrustPath(options.home);
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, `${JSON.stringify(trust, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
  return { ...project, trusted: true, changedSinceTrust: false };
}
