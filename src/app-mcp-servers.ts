import { loadMcpConfig, mcpProjectFileName } from './config/index.ts';
import { HarnessError } from './llm/index.ts';
import type { McpInvalidServer, McpServerDefinition, McpUntrustedServer } from './plugins/mcp/index.ts';
import { parseMcpServerConfig } from './plugins/mcp/index.ts';

/** The MCP servers of a workspace as the app harness runs them, and what the user should be told. */
export interface AppMcpServers {
  /** Servers to run: Rein's config file's and, once trusted, the project's (which win on a name clash). */
  readonly servers: readonly McpServerDefinition[];
  readonly untrusted: readonly McpUntrustedServer[];
  readonly invalid: readonly McpInvalidServer[];
  /** One sentence per problem or pending decision. */
  readonly notices: readonly string[];
}

/**
 * Reads `mcpServers` from Rein's config file and the project's `.mcp.json`, validates each entry and
 * expands its `${VAR}`s from `env`; a broken file or entry is reported and costs only itself.
 */
export async function appMcpServers(options: {
  home: string;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}): Promise<AppMcpServers> {
  const sources = await loadMcpConfig({ home: options.home, cwd: options.cwd });
  const notices = sources.problems.map((problem) => `MCP servers not loaded: ${problem.message}`);
  const byName = new Map<string, McpServerDefinition>();
  const untrusted: McpUntrustedServer[] = [];
  const invalid: McpInvalidServer[] = [];
  const parse = (
    file: string,
    scope: 'user' | 'project',
    name: string,
    raw: unknown,
  ): McpServerDefinition | undefined => {
    try {
      const config = parseMcpServerConfig(name, raw, { env: options.env, where: file });
      return { name, config, origin: { scope, file } };
    } catch (error) {
      if (!(error instanceof HarnessError)) throw error;
      invalid.push({ name, origin: { scope, file }, error: { code: error.code, message: error.message } });
      notices.push(`MCP server ${name} is not started: ${error.message}`);
      return undefined;
    }
  };
  if (sources.user !== undefined) {
    for (const [name, raw] of Object.entries(sources.user.servers)) {
      const definition = parse(sources.user.file, 'user', name, raw);
      if (definition !== undefined) byName.set(name, definition);
    }
  }
  const project = sources.project;
  if (project !== undefined) {
    const names = Object.keys(project.servers);
    if (project.trusted) {
      for (const name of names) {
        const definition = parse(project.file, 'project', name, project.servers[name]);
        if (definition !== undefined) byName.set(name, definition);
      }
    } else if (names.length > 0) {
      const hint = `${project.changedSinceTrust ? `${project.file} changed since it was trusted; ` : ''}review ${project.file}, then run \`rein mcp trust\` in ${project.directory}`;
      for (const name of names) {
        try {
          const config = parseMcpServerConfig(name, project.servers[name], {
            env: options.env,
            where: project.file,
          });
          untrusted.push({ name, config, origin: { scope: 'project', file: project.file }, hint });
        } catch (error) {
          if (!(error instanceof HarnessError)) throw error;
          invalid.push({
            name,
            origin: { scope: 'project', file: project.file },
            error: { code: error.code, message: error.message },
          });
        }
      }
      notices.push(
        `${names.length} MCP server${names.length === 1 ? '' : 's'} of this project (${names.join(', ')}) ` +
          `${names.length === 1 ? 'is' : 'are'} not started until you trust ${mcpProjectFileName}: ${hint}.`,
      );
    }
  }
  return { servers: [...byName.values()], untrusted, invalid, notices };
}
