import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { rememberMcpTools } from './tool-card-view.tsx';

/** One MCP server as `/api/mcp` reports it. */
interface McpServerRow {
  name: string;
  state: string;
  transport: string;
  origin: { scope: string; file?: string };
  tools: { name: string; tool: string; readOnly: boolean }[];
  error?: { code: string; message: string };
}

const refreshMs = 3_000;

/** The MCP servers and their state (ready, starting, failed, untrusted with what to do); hidden when none. */
export function McpPanel() {
  const [servers, setServers] = useState<McpServerRow[]>([]);
  useEffect(() => {
    let stopped = false;
    const load = (): void => {
      api<{ servers: McpServerRow[] }>('GET', '/api/mcp').then(
        (answer) => {
          if (stopped) return;
          rememberMcpTools(answer.servers);
          setServers(answer.servers);
        },
        () => {
          // The panel is informational: a failed poll keeps the last answer and tries again.
        },
      );
    };
    load();
    const timer = setInterval(load, refreshMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  if (servers.length === 0) return null;
  return (
    <section class="mcp-panel" data-testid="mcp-panel" aria-label="MCP servers">
      <span class="mcp-label">MCP</span>
      {servers.map((server) => (
        <span
          key={`${server.name}:${server.origin.scope}`}
          class={`chip mcp-server mcp-${server.state}`}
          data-testid="mcp-server"
          data-server={server.name}
          data-state={server.state}
          title={[
            `${server.name} (${server.transport}, ${server.origin.file ?? server.origin.scope})`,
            ...server.tools.map((tool) => tool.name),
            ...(server.error !== undefined ? [server.error.message] : []),
          ].join('\n')}
        >
          {server.name} · {server.state}
          {server.state === 'ready' ? ` · ${server.tools.length} tools` : ''}
          {server.state === 'untrusted' && server.error !== undefined && (
            <span class="mcp-hint" data-testid="mcp-hint">
              {' '}
              — {server.error.message}
            </span>
          )}
        </span>
      ))}
    </section>
  );
}
