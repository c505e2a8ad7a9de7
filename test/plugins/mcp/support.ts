import { resolve } from 'node:path';
import type {
  Agent,
  ApprovalDecision,
  ApprovalRequest,
  Harness,
  McpPlugin,
  McpPluginOptions,
  McpStdioServerConfig,
  PermissionMode,
  PermissionRule,
} from '../../../src/index.ts';
import { builtinTools, createHarness, mcpPlugin, permissionsPlugin } from '../../../src/index.ts';
import type { ScriptedTurn } from '../../../src/testing/index.ts';
import { ScriptedProvider } from '../../../src/testing/index.ts';

const root = resolve(import.meta.dirname, '../../..');

/** The stdio config of `@modelcontextprotocol/server-filesystem` serving `directory`. */
export function filesystemServer(directory: string): McpStdioServerConfig {
  return {
    type: 'stdio',
    command: process.execPath,
    args: [resolve(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'), directory],
  };
}

/** The stdio config of `@modelcontextprotocol/server-everything`. */
export function everythingServer(): McpStdioServerConfig {
  return {
    type: 'stdio',
    command: process.execPath,
    args: [resolve(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  };
}

/** The path of the everything server's entry point. */
export const everythingEntry = resolve(
  root,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

/** The stdio config of the hostile test server, whose behaviour `controlFile` sets per launch and call. */
export function hostileServer(controlFile: string): McpStdioServerConfig {
  return {
    type: 'stdio',
    command: process.execPath,
    args: [resolve(import.meta.dirname, 'hostile-server.mjs'), controlFile],
  };
}

/** A harness over a scripted model with the built-in tools, permissions and the MCP plugin, and one agent. */
export interface McpFixture {
  harness: Harness;
  model: ScriptedProvider;
  mcp: McpPlugin;
  agent: Agent;
  asked: ApprovalRequest[];
  close(): Promise<void>;
}

/** Builds the fixture. */
export async function mcpFixture(options: {
  workspace: string;
  reinHome: string;
  mcp: McpPluginOptions;
  responses: ScriptedTurn[];
  mode?: PermissionMode;
  rules?: PermissionRule[];
  approver?: (request: ApprovalRequest) => ApprovalDecision;
}): Promise<McpFixture> {
  const model = new ScriptedProvider({ responses: options.responses, fallback: { text: 'done' } });
  const mcp = mcpPlugin({
    cwd: options.workspace,
    outputDirectory: resolve(options.reinHome, 'tool-output'),
    ...options.mcp,
  });
  const harness = createHarness({
    providers: [model],
    tools: builtinTools({ workspace: options.workspace, reinHome: options.reinHome }),
    plugins: [
      permissionsPlugin({
        mode: options.mode ?? 'ask',
        workspace: options.workspace,
        reinHome: options.reinHome,
        ...(options.rules !== undefined ? { rules: options.rules } : {}),
      }),
      mcp,
    ],
  });
  const asked: ApprovalRequest[] = [];
  const approver = options.approver;
  if (approver !== undefined) {
    harness.approvals.attach({
      notify: (request) => {
        asked.push(request);
        return Promise.resolve(approver(request));
      },
    });
  }
  const agent = await harness.createAgent({
    provider: 'scripted',
    model: 'test-model',
    cwd: options.workspace,
  });
  return {
    harness,
    model,
    mcp,
    agent,
    asked,
    close: async () => {
      await harness.dispose();
      await mcp.close();
    },
  };
}

/** One logged tool result, flattened. */
export interface LoggedResult {
  callId: string;
  text: string;
  isError: boolean;
  code: string | undefined;
  types: string[];
}

/** The tool results of an agent's log, in order. */
export function loggedResults(agent: Agent): LoggedResult[] {
  return agent.session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const data = event.data as {
        message: {
          content: { toolCallId: string; isError?: boolean; content: { type: string; text?: string }[] }[];
        };
        error?: { code: string };
      };
      const block = data.message.content[0]!;
      return {
        callId: block.toolCallId,
        text: block.content.map((part) => part.text ?? '').join(''),
        isError: block.isError === true,
        code: data.error?.code,
        types: block.content.map((part) => part.type),
      };
    });
}

/** The tool names of every `request/header` on the log, in order. */
export function headerToolNames(agent: Agent): string[][] {
  return agent.session.events
    .filter((event) => event.type === 'request/header')
    .map((event) =>
      ((event.data as { header: { tools?: { name: string }[] } }).header.tools ?? []).map(
        (tool) => tool.name,
      ),
    );
}
