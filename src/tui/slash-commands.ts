import type { PermissionMode } from '../internal.ts';
import {
  HarnessError,
  activeGoal,
  clearGoal,
  compactSession,
  costOf,
  permissionModes,
  setGoal,
} from '../internal.ts';
import type { ChatSession } from './chat-session.ts';
import type { PromptTemplate } from './prompt-templates.ts';
import { expandTemplate } from './prompt-templates.ts';

/** A choice in a picker. */
export interface PickerItem {
  readonly value: string;
  readonly label: string;
  readonly description?: string;
}

/** What a slash command may do to the screen. */
export interface CommandContext {
  readonly chat: ChatSession;
  /** A line in the transcript that is not part of the session's log. */
  notice(text: string, tone?: 'info' | 'error'): void;
  /** Opens a picker; `choose` runs with the chosen value. */
  pick(title: string, items: readonly PickerItem[], choose: (value: string) => Promise<void>): void;
  /** Sends a prompt as if typed (mentions attached). */
  submit(text: string): Promise<void>;
  /** Leaves the TUI. */
  exit(): void;
}

/** A built-in slash command. */
export interface SlashCommand {
  readonly name: string;
  readonly description: string;
  readonly argumentHint?: string;
  run(args: string, context: CommandContext): Promise<void>;
}

/** The built-in slash commands, in the order `/help` lists them. */
export const builtinCommands: readonly SlashCommand[] = [
  {
    name: 'help',
    description: 'List the commands and keys',
    async run(_args, context) {
      context.notice(helpText());
    },
  },
  {
    name: 'model',
    description: 'Pick the model for the next requests',
    argumentHint: '[provider/model]',
    async run(args, context) {
      const chat = context.chat;
      const set = (text: string): Promise<void> => {
        const route = chat.setModel(text);
        context.notice(`Model: ${route.provider}/${route.model} from the next request on.`);
        return Promise.resolve();
      };
      if (args.trim() !== '') return set(args.trim());
      const current = `${chat.currentRoute.provider}/${chat.currentRoute.model}`;
      const items = chat.models().map((model) => ({
        value: model,
        label: model,
        ...(model === current ? { description: 'current' } : {}),
      }));
      if (items.length === 0) {
        context.notice('No provider offers a model list; name one: /model provider/model', 'error');
        return;
      }
      context.pick('Model for the next requests', items, set);
    },
  },
  {
    name: 'approve',
    description: 'Switch the approval mode',
    argumentHint: '[ask|auto-edit|yolo|read-only]',
    async run(args, context) {
      const set = async (text: string): Promise<void> => {
        const mode = permissionModes.find((candidate) => candidate === text);
        if (mode === undefined) {
          context.notice(`Unknown approval mode '${text}'; one of ${permissionModes.join(', ')}.`, 'error');
          return;
        }
        await context.chat.setMode(mode);
        context.notice(`Approval mode: ${mode}.`);
      };
      if (args.trim() !== '') return set(args.trim());
      context.pick(
        'Approval mode',
        permissionModes.map((mode) => ({ value: mode, label: mode, description: modeDescription(mode) })),
        set,
      );
    },
  },
  {
    name: 'compact',
    description: 'Summarize older history so it fits the context window again',
    async run(_args, context) {
      const result = await compactSession(context.chat.harness, context.chat.agent);
      context.notice(
        result.compacted
          ? `Compacted: about ${result.shadowedTokenCount} tokens of history became a ${result.summaryTokenCount}-token summary.`
          : 'Nothing to compact: the history already fits what is kept verbatim.',
      );
    },
  },
  {
    name: 'fork',
    description: 'Copy this session up to its last closed turn and continue in the copy',
    async run(_args, context) {
      const from = context.chat.agent.id;
      const id = await context.chat.fork();
      context.notice(`Forked ${from} → now in ${id} (the original stays as it was).`);
    },
  },
  {
    name: 'sessions',
    description: 'Pick a session of this directory to resume',
    async run(_args, context) {
      await pickSession(context);
    },
  },
  {
    name: 'resume',
    description: 'Resume a session by id (or pick one)',
    argumentHint: '[id]',
    async run(args, context) {
      if (args.trim() === '') return pickSession(context);
      await context.chat.resume(args.trim());
      context.notice(`Resumed ${context.chat.agent.id}.`);
    },
  },
  {
    name: 'new',
    description: 'Start a new session in this directory',
    async run(_args, context) {
      await context.chat.startNew();
      context.notice(`New session ${context.chat.agent.id}.`);
    },
  },
  {
    name: 'cost',
    description: 'Tokens and cost per turn and for the session',
    async run(_args, context) {
      context.notice(costReport(context.chat));
    },
  },
  {
    name: 'goal',
    description: 'Set a goal the model works toward until done (/goal clear stops it)',
    argumentHint: '[objective|clear]',
    async run(args, context) {
      const agent = context.chat.agent;
      const objective = args.trim();
      if (objective === '') {
        const goal = activeGoal(agent);
        context.notice(
          goal === undefined
            ? 'No goal is set. /goal <objective> sets one.'
            : `Goal: ${goal.objective} (round ${goal.rounds} of ${goal.maxRounds})`,
        );
        return;
      }
      if (objective === 'clear') {
        context.notice(clearGoal(agent) ? 'Goal cleared.' : 'No goal was set.');
        return;
      }
      setGoal(agent, objective);
    },
  },
  {
    name: 'mcp',
    description: 'The MCP servers: status, tools, where they are configured',
    async run(_args, context) {
      const mcp = context.chat.harness.mcp;
      await mcp.start();
      const servers = mcp.status();
      const notices = context.chat.harness.mcpNotices;
      if (servers.length === 0) {
        context.notice(
          [
            ...notices,
            'No MCP servers are configured: add "mcpServers" to Rein\'s config file or a .mcp.json here (then rein mcp trust).',
          ].join('\n'),
        );
        return;
      }
      const lines: string[] = [...notices];
      for (const server of servers) {
        const where = server.origin.file !== undefined ? ` · ${server.origin.file}` : '';
        const info =
          server.serverInfo !== undefined ? ` (${server.serverInfo.name} ${server.serverInfo.version})` : '';
        lines.push(`${server.name} · ${server.state} · ${server.transport}${info}${where}`);
        if (server.error !== undefined) lines.push(`  ${server.error.code}: ${server.error.message}`);
        const tools = server.tools.map((tool) => `${tool.name}${tool.readOnly ? ' (read-only)' : ''}`);
        if (tools.length > 0) lines.push(`  tools: ${tools.join(', ')}`);
      }
      context.notice(
        lines.join('\n'),
        servers.some((server) => server.state === 'failed') ? 'error' : 'info',
      );
    },
  },
  {
    name: 'quit',
    description: 'Leave (the session stays resumable)',
    async run(_args, context) {
      context.exit();
    },
  },
];

/** Runs a slash command line (`/name args`); false when it names no command or template. */
export async function runSlashCommand(
  line: string,
  templates: readonly PromptTemplate[],
  context: CommandContext,
): Promise<boolean> {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(line.trim());
  if (match === null) return false;
  const [, name, args] = match as unknown as [string, string, string];
  const command = builtinCommands.find((candidate) => candidate.name === name);
  const template = templates.find((candidate) => candidate.name === name);
  if (command === undefined && template === undefined) return false;
  try {
    if (command !== undefined) await command.run(args, context);
    else await context.submit(expandTemplate(template!, args));
  } catch (error) {
    const code = error instanceof HarnessError ? error.code : 'COMMAND_FAILED';
    context.notice(
      `/${name} failed — ${code}: ${error instanceof Error ? error.message : String(error)}`,
      'error',
    );
  }
  return true;
}

async function pickSession(context: CommandContext): Promise<void> {
  const rows = await context.chat.sessions();
  const current = context.chat.agent.id;
  const items = rows.map((row) => ({
    value: row.id,
    label: `${row.id.slice(0, 8)}  ${row.title ?? '(untitled)'}`,
    description: `${new Date(row.updatedAt).toISOString().slice(0, 16).replace('T', ' ')} · ${row.turns} turns${row.id === current ? ' · open' : ''}`,
  }));
  if (items.length === 0) {
    context.notice('No stored sessions in this directory yet.');
    return;
  }
  context.pick('Resume a session', items, async (id) => {
    await context.chat.resume(id);
    context.notice(`Resumed ${id}.`);
  });
}

function costReport(chat: ChatSession): string {
  const lines: string[] = [];
  let total = 0;
  let unknown = false;
  for (const turn of chat.transcript.turns) {
    let cost = 0;
    for (const served of turn.routes) {
      let price;
      try {
        price = chat.harness.llm.prepare({ provider: served.provider, model: served.model }).model?.pricing;
      } catch {
        // A provider that is no longer configured has no known price.
        price = undefined;
      }
      if (price === undefined) unknown = true;
      else cost += costOf(served.usage, price);
    }
    total += cost;
    const usage = turn.usage;
    lines.push(
      `turn ${turn.turn}: ${usage.inputTokens} in (${usage.cacheReadTokens} cached) · ${usage.outputTokens} out · $${cost.toFixed(4)}`,
    );
  }
  if (lines.length === 0) return 'No model calls yet in this session.';
  lines.push(`session: $${total.toFixed(4)}${unknown ? ' (some responses have no known price)' : ''}`);
  return lines.join('\n');
}

function modeDescription(mode: PermissionMode): string {
  switch (mode) {
    case 'ask':
      return 'reads run; writes and shell commands ask';
    case 'auto-edit':
      return 'edits run; shell commands ask';
    case 'yolo':
      return 'everything runs';
    case 'read-only':
      return 'changes are denied';
    case 'sandbox':
      return 'edits and sandboxed shell commands run; anything leaving the sandbox asks';
  }
}

/** The `/help` text: commands and keys. */
export function helpText(): string {
  const commands = builtinCommands.map(
    (command) =>
      `  /${command.name}${command.argumentHint !== undefined ? ` ${command.argumentHint}` : ''} — ${command.description}`,
  );
  return [
    'Commands:',
    ...commands,
    '  /<template> [arguments] — a prompt from .rein/commands, .claude/commands or .agents/commands',
    'Keys:',
    '  Enter send (while a turn runs: steer it at its next step) · Shift+Enter, Ctrl-J or \\ Enter new line',
    '  Alt+Enter or Ctrl-Q queue for the next turn · Shift+Tab edit the queue · Esc stop the turn',
    '  PgUp/PgDn scroll · End follow · ↑/↓ history · Tab complete · @path attach a file · Ctrl-C twice quit',
  ].join('\n');
}
