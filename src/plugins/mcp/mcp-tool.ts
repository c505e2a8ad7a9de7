import type { JsonSchema } from '../../llm/index.ts';
import type { Tool, ToolOutput } from '../../tools/index.ts';
import { validateToolArguments } from '../../tools/index.ts';
import type { McpConnection, McpListedTool } from './mcp-connection.ts';
import type { McpOutputSettings } from './mcp-content.ts';
import { mcpResultOutput } from './mcp-content.ts';

/** What Rein knows about a tool it made from an MCP tool (for listings and UIs). */
export interface McpToolInfo {
  /** The name the model sees. */
  readonly name: string;
  /** The server's own name of the tool. */
  readonly tool: string;
  readonly server: string;
  /** From `readOnlyHint`: runs in parallel and counts as a read for the permission policy. */
  readonly readOnly: boolean;
  readonly description: string;
}

/** The tool's input schema when it is usable as a tool's parameters; otherwise why not. */
export function mcpToolParameters(listed: McpListedTool): { schema: JsonSchema } | { problem: string } {
  const raw = listed.inputSchema;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { problem: 'its input schema is not an object' };
  }
  const { $schema: _dialect, ...schema } = raw as Record<string, unknown>;
  if (schema.type !== 'object') return { problem: 'its input schema is not of type "object"' };
  try {
    validateToolArguments({ name: listed.name, description: '', parameters: schema, execute: () => '' }, {});
  } catch (error) {
    return { problem: `its input schema is not valid JSON Schema: ${(error as Error).message}` };
  }
  return { schema };
}

/**
 * Builds the Rein tool for one MCP tool: its schema as parameters, `readOnlyHint` as effect `read` and
 * concurrency safety, anything else (a `destructiveHint`, or no hints) as effect `other`, exclusive.
 */
export function createMcpTool(options: {
  name: string;
  listed: McpListedTool;
  schema: JsonSchema;
  connection: McpConnection;
  output: McpOutputSettings;
}): { tool: Tool; info: McpToolInfo } {
  const { name, listed, schema, connection, output } = options;
  const readOnly = listed.annotations?.readOnlyHint === true;
  const description =
    listed.description ??
    listed.title ??
    listed.annotations?.title ??
    `${listed.name} (MCP server ${connection.name})`;
  const meta = { mcp: { server: connection.name, tool: listed.name } };
  const tool: Tool = {
    name,
    description,
    effect: readOnly ? 'read' : 'other',
    parameters: schema,
    ...(readOnly ? { isConcurrencySafe: () => true } : {}),
    async execute(args, context): Promise<ToolOutput> {
      const report = context.reportProgress;
      const result = await connection.call(listed.name, args, {
        signal: context.signal,
        ...(report !== undefined
          ? {
              onProgress: (progress: number, total?: number, message?: string) =>
                report({
                  progress,
                  ...(total !== undefined ? { total } : {}),
                  ...(message !== undefined ? { message } : {}),
                }),
            }
          : {}),
      });
      const rendered = mcpResultOutput(result, output, meta);
      return typeof rendered === 'object' && !Array.isArray(rendered) && rendered.isError === true
        ? { ...rendered, errorCode: 'MCP_TOOL_ERROR' }
        : rendered;
    },
  };
  return { tool, info: { name, tool: listed.name, server: connection.name, readOnly, description } };
}
