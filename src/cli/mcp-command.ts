import { resolve } from 'node:path';
import type { McpServerStatus, ReinHarness } from '../index.ts';
import { createReinHarness, resolveReinHome, trustMcpProject } from '../index.ts';
import { CliError, exitCodes } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import type { CommandSpec, ParsedCommand } from './command-line.ts';
import type { DoctorCheck } from './doctor-command.ts';

/** `rein mcp`. */
export const mcpSpec: CommandSpec = {
  name: 'mcp',
  summary: "List the MCP servers (status, tools, config file), or trust a project's .mcp.json.",
  usage: ['mcp list [options]', 'mcp trust [options]'],
  maxPositionals: 1,
  options: [
    { name: 'json', type: 'boolean', description: 'list: print the servers as a JSON array.' },
    {
      name: 'cwd',
      short: 'C',
      type: 'string',
      value: 'dir',
      description: 'The workspace directory (default: the current directory).',
    },
  ],
  examples: ['rein mcp list', 'rein mcp list --json', 'rein mcp trust'],
  notes: [
    'Servers come from "mcpServers" in Rein\'s config file and from the project\'s .mcp.json. ' +
      'list starts each server (as a session would) to show its status and tools.',
    "A project's servers are arbitrary programs: they start only once you trusted its .mcp.json with " +
      '`rein mcp trust`, which Rein records under its home for that directory; a changed .mcp.json needs trusting again.',
  ],
};

function describeServer(server: McpServerStatus): string[] {
  const where = server.origin.file !== undefined ? ` from ${server.origin.file}` : '';
  const info =
    server.serverInfo !== undefined ? ` (${server.serverInfo.name} ${server.serverInfo.version})` : '';
  const lines = [`${server.name}  ${server.state}  ${server.transport}${where}${info}`];
  if (server.error !== undefined) {
    lines.push(...server.error.message.split('\n').map((line) => `  ${line}`));
  }
  for (const tool of server.tools) {
    lines.push(`  ${tool.name}${tool.readOnly ? '  (read-only)' : ''}`);
  }
  return lines;
}

async function harnessFor(io: CliIo, parsed: ParsedCommand): Promise<ReinHarness> {
  const cwd = typeof parsed.values.cwd === 'string' ? resolve(io.cwd, parsed.values.cwd) : io.cwd;
  return createReinHarness({ cwd, env: io.env });
}

/** `rein mcp list` and `rein mcp trust`. */
export async function mcpCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const action = parsed.positionals[0] ?? 'list';
  if (action === 'trust') {
    const cwd = typeof parsed.values.cwd === 'string' ? resolve(io.cwd, parsed.values.cwd) : io.cwd;
    const project = await trustMcpProject({ home: resolveReinHome(undefined, io.env), cwd });
    const names = Object.keys(project.servers);
    io.stdout.write(
      `Trusted ${project.file}: ${names.length} server${names.length === 1 ? '' : 's'}` +
        `${names.length > 0 ? ` (${names.join(', ')})` : ''} will start in ${project.directory}.\n`,
    );
    return exitCodes.ok;
  }
  if (action !== 'list') {
    throw new CliError('USAGE', `unknown mcp action '${action}' (use list or trust)`, {
      exitCode: exitCodes.usage,
      usageOf: 'mcp',
    });
  }
  const harness = await harnessFor(io, parsed);
  try {
    for (const notice of harness.mcpNotices) io.stderr.write(`${notice}\n`);
    await harness.mcp.start();
    const servers = harness.mcp.status();
    if (parsed.values.json === true) {
      io.stdout.write(`${JSON.stringify(servers, null, 2)}\n`);
    } else if (servers.length === 0) {
      io.stdout.write(
        'No MCP servers are configured (add "mcpServers" to .mcp.json or Rein\'s config file).\n',
      );
    } else {
      io.stdout.write(`${servers.flatMap(describeServer).join('\n')}\n`);
    }
    for (const warning of harness.mcp.warnings()) {
      if (warning.code === 'MCP_TOOL_SKIPPED' || warning.code === 'MCP_TOOL_RENAMED') {
        io.stderr.write(`${warning.message}\n`);
      }
    }
    return servers.some((server) => server.state === 'failed' || server.state === 'invalid')
      ? exitCodes.error
      : exitCodes.ok;
  } finally {
    await harness.dispose();
  }
}

/** The `rein doctor` checks of MCP: each configured server starts (or why not, and what to do). */
export async function mcpChecks(harness: ReinHarness): Promise<DoctorCheck[]> {
  await harness.mcp.start();
  return harness.mcp.status().map((server): DoctorCheck => {
    const name = `mcp ${server.name}`;
    const where = server.origin.file !== undefined ? ` (${server.origin.file})` : '';
    switch (server.state) {
      case 'ready':
        return { name, status: 'ok', detail: `starts; ${server.tools.length} tools${where}` };
      case 'untrusted':
        return {
          name,
          status: 'warn',
          detail: `not started: the project is not trusted${where}`,
          fix: server.error?.message ?? 'run rein mcp trust',
        };
      default:
        return {
          name,
          status: 'fail',
          detail: `${server.state}: ${server.error?.message ?? 'did not start'}`,
          fix: `fix its entry in ${server.origin.file ?? 'the configuration'}, then run rein mcp list`,
        };
    }
  });
}
