import type { McpServer } from '@agentclientprotocol/sdk';
import type { McpServerDefinition } from '../index.ts';
import { reinRequestError } from './acp-errors.ts';

/**
 * The MCP servers a client passes in `session/new` / `session/load` as Rein's server definitions
 * (stdio, Streamable HTTP, HTTP+SSE; environment and headers as given). Throws a protocol error
 * (`MCP_INVALID_CONFIG`) for a nameless or repeated server.
 */
export function clientMcpServers(servers: readonly McpServer[]): McpServerDefinition[] {
  const seen = new Set<string>();
  return servers.map((server) => {
    if (server.name.trim() === '' || seen.has(server.name)) {
      throw reinRequestError(
        'MCP_INVALID_CONFIG',
        server.name.trim() === ''
          ? 'every MCP server needs a name'
          : `two MCP servers are named '${server.name}'`,
      );
    }
    seen.add(server.name);
    const origin = { scope: 'session' as const };
    if ('type' in server && (server.type === 'http' || server.type === 'sse')) {
      return {
        name: server.name,
        origin,
        config: {
          type: server.type,
          url: server.url,
          headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])),
        },
      };
    }
    const stdio = server as Extract<McpServer, { command: string }>;
    return {
      name: stdio.name,
      origin,
      config: {
        type: 'stdio',
        command: stdio.command,
        args: [...stdio.args],
        env: Object.fromEntries(stdio.env.map((variable) => [variable.name, variable.value])),
      },
    };
  });
}
