export * from './mcp-connection.ts';
export * from './mcp-content.ts';
export * from './mcp-error.ts';
export * from './mcp-plugin.ts';
export * from './mcp-server-config.ts';
export * from './mcp-server-set.ts';
export * from './mcp-tool.ts';
export * from './mcp-tool-name.ts';
