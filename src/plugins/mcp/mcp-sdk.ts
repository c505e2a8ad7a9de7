import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  JSONRPCMessageSchema,
  ListRootsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

/** The parts of the official MCP SDK (client side only) Rein uses, loaded on first need. */
export interface McpSdk {
  readonly Client: typeof Client;
  readonly StdioClientTransport: typeof StdioClientTransport;
  readonly getDefaultEnvironment: typeof getDefaultEnvironment;
  readonly StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  readonly StreamableHTTPError: typeof StreamableHTTPError;
  readonly SSEClientTransport: typeof SSEClientTransport;
  readonly ListRootsRequestSchema: typeof ListRootsRequestSchema;
  readonly ToolListChangedNotificationSchema: typeof ToolListChangedNotificationSchema;
  readonly McpError: typeof McpError;
  readonly JSONRPCMessageSchema: typeof JSONRPCMessageSchema;
}

let loading: Promise<McpSdk> | undefined;

/**
 * Loads the SDK's client modules once, the first time a server is started: Rein's start-up never pays
 * for them when no MCP server is configured.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([client, stdio, streamable, sse, types]) => ({
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    StreamableHTTPError: streamable.StreamableHTTPError,
    SSEClientTransport: sse.SSEClientTransport,
    ListRootsRequestSchema: types.ListRootsRequestSchema,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    McpError: types.McpError,
    JSONRPCMessageSchema: types.JSONRPCMessageSchema,
  }));
  return loading;
}
