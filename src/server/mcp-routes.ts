import type { McpServerStatus } from '../internal.ts';
import type { ApiAnswer, ApiContext, Route } from './api-routes.ts';

/** The MCP view of the server: the status of every configured server (empty when none is attached). */
export const mcpRoutes: readonly Route[] = [{ method: 'GET', pattern: /^\/api\/mcp$/, handler: mcpStatus }];

function mcpStatus(context: ApiContext): Promise<ApiAnswer> {
  const servers: McpServerStatus[] = context.options.mcp?.status() ?? [];
  return Promise.resolve({ body: { servers } });
}
