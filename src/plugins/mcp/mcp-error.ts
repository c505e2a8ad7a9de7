import { HarnessError } from '../../llm/index.ts';

/** The codes of MCP failures, on thrown errors and on tool error results. */
export type McpErrorCode =
  | 'MCP_INVALID_CONFIG'
  | 'MCP_START_FAILED'
  | 'MCP_START_TIMEOUT'
  | 'MCP_SERVER_UNTRUSTED'
  | 'MCP_SERVER_DIED'
  | 'MCP_CALL_TIMEOUT'
  | 'MCP_CALL_FAILED'
  | 'MCP_TOOL_ERROR'
  | 'MCP_CLOSED';

/** An MCP failure naming its server (and, for a process, its last stderr lines). */
export class McpError extends HarnessError {
  declare readonly code: McpErrorCode;
  /** The configured server name, when the failure is about one server. */
  readonly server: string | undefined;
  constructor(code: McpErrorCode, message: string, options?: { cause?: unknown; server?: string }) {
    super(code, message, options);
    this.name = 'McpError';
    this.server = options?.server;
  }
}
