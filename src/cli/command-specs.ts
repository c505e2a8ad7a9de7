import type { CommandSpec, OptionSpec } from './command-line.ts';

const modelOption: OptionSpec = {
  name: 'model',
  short: 'm',
  type: 'string',
  value: 'provider/model',
  description: 'The model to use, e.g. deepseek/deepseek-chat or demo/running-example.',
};
const cwdOption: OptionSpec = {
  name: 'cwd',
  short: 'C',
  type: 'string',
  value: 'dir',
  description: 'The workspace directory (default: the current directory).',
};
const approveOption: OptionSpec = {
  name: 'approve',
  type: 'string',
  value: 'mode',
  description:
    'Approval mode: ask (default; reads run, writes and shell commands ask), auto-edit (edits run, ' +
    'shell commands ask), sandbox (edits run, shell commands run unasked inside a bubblewrap sandbox; ' +
    'falls back to ask where bwrap cannot run), yolo (everything runs), read-only (changes are denied).',
};
const storeOption: OptionSpec = {
  name: 'store',
  type: 'string',
  value: 'store',
  description:
    'Where sessions live: disk (default: <home>/sessions) or postgres://user:password@host:port/database ' +
    '(default: REIN_STORE).',
};
const lastOption: OptionSpec = {
  name: 'last',
  type: 'boolean',
  description: 'The most recently updated session of the current directory, instead of an id.',
};
const sessionIdNote =
  'A session id may be shortened to any unique prefix of four characters or more (as `rein sessions` lists them).';
const jsonOption = (description: string): OptionSpec => ({ name: 'json', type: 'boolean', description });

/** `rein run`. */
export const runSpec: CommandSpec = {
  name: 'run',
  load: async () => (await import('./run-command.ts')).runCommand,
  summary: 'Run one prompt headlessly and stream the answer.',
  usage: [
    'run [options] "prompt"',
    'run [options] -p "prompt"',
    'echo "prompt" | rein run [options]',
    'run [options] - < prompt.txt',
  ],
  maxPositionals: Number.POSITIVE_INFINITY,
  options: [
    {
      name: 'prompt',
      short: 'p',
      type: 'string',
      value: 'text',
      description: 'The prompt (instead of the positional argument).',
    },
    {
      name: 'image',
      type: 'string',
      value: 'file',
      repeatable: true,
      description:
        'Attach an image file (PNG, JPEG, GIF or WebP) to the prompt; repeat it for more. The model must take images.',
    },
    jsonOption(
      'Print every durable session event as one JSON object per line ({ seq, type, time, data }), plus live lines marked { live: true, type, data }.',
    ),
    modelOption,
    {
      name: 'reasoning-effort',
      type: 'string',
      value: 'level',
      description:
        'How hard the model thinks: none, minimal, low, medium, high, xhigh or max (each vendor takes the levels it knows).',
    },
    {
      name: 'thinking',
      type: 'boolean',
      optionalNumber: true,
      value: 'budget',
      description:
        'Turn extended thinking on, optionally with a budget in tokens (--thinking 8000); on Chat Completions vendors the budget picks the nearest effort level.',
    },
    cwdOption,
    approveOption,
    {
      name: 'max-turns',
      type: 'string',
      value: 'n',
      description: 'Stop before starting more than n turns in this run.',
    },
    {
      name: 'max-steps',
      type: 'string',
      value: 'n',
      description: 'Stop a turn before its (n+1)th model request.',
    },
    {
      name: 'goal',
      type: 'string',
      value: 'objective',
      description:
        'Set a goal first: the model is asked to go on until it calls goal_complete, within a bounded number of rounds ' +
        '(also written as the prompt "/goal objective"; the objective is the prompt when none is given).',
    },
    {
      name: 'budget-tokens',
      type: 'string',
      value: 'n',
      description: 'Pause a turn at the next step once it has processed n tokens.',
    },
    {
      name: 'budget-cost',
      type: 'string',
      value: 'usd',
      description:
        "Pause a turn at the next step once it has cost this many US dollars (at the model's prices).",
    },
    {
      name: 'budget-steps',
      type: 'string',
      value: 'n',
      description: 'Pause a turn once it has made n model requests.',
    },
    {
      name: 'resume',
      type: 'string',
      value: 'id',
      description: 'Continue the stored session with this id (or a unique prefix of it).',
    },
    {
      name: 'continue',
      short: 'c',
      type: 'boolean',
      description: 'Continue the latest session of this directory.',
    },
    storeOption,
  ],
  examples: [
    'rein run "summarize README.md"',
    'rein -p "what does src/index.ts export?" --model deepseek/deepseek-chat',
    'rein run --approve read-only - < task.md',
    'rein run --json --approve yolo "run the tests and fix what fails" > events.jsonl',
    'rein run --continue "now add a test for it"',
    'rein run --model anthropic/claude-sonnet-4-5 --image screenshot.png "why is this button misaligned?"',
    'rein run --approve yolo --goal "make npm test pass"',
    'rein run "/goal migrate the config loader to zod"',
    'rein run --budget-cost 0.50 --budget-steps 30 "refactor the parser"',
  ],
  notes: [
    'Assistant text goes to stdout; tool activity, approvals and errors go to stderr.',
    'On a terminal, calls that need approval are asked interactively (allow once, allow for this session, deny with a reason). ' +
      'Without a terminal, such calls are denied unless --approve or a rule allows them, and the denial is printed.',
    'Ctrl-C cancels the turn (exit 130); a second Ctrl-C exits at once after the log is flushed.',
    'Goals: round notices, completion and stops (with the reason) are printed on stderr; --json carries the goal/* records.',
    'Budgets apply per turn. When one is reached the step in progress finishes and the work pauses: on a terminal you are asked ' +
      'whether to double the limit and continue; otherwise rein prints the limit and the command that continues (exit 4).',
    'Exit codes: 0 completed, 1 error (code and message on stderr), 2 wrong command line, 3 the model hit its output limit, ' +
      '4 a budget was reached (the work is paused), 130 interrupted.',
  ],
};

/** `rein sessions`. */
export const sessionsSpec: CommandSpec = {
  name: 'sessions',
  load: async () => (await import('./session-commands.ts')).sessionsCommand,
  summary: 'List stored sessions (id, title, cwd, updated, turns, cost); export or import session logs.',
  usage: [
    'sessions [options]',
    'sessions export [options] --out <dir> (<id> … | --all)',
    'sessions import [options] <file.jsonl | dir> …',
  ],
  maxPositionals: Number.POSITIVE_INFINITY,
  options: [
    jsonOption('Print the rows as a JSON array.'),
    {
      name: 'out',
      type: 'string',
      value: 'dir',
      description: 'export: the directory the <id>.jsonl logs are written to (a disk store directory).',
    },
    { name: 'all', type: 'boolean', description: 'export: every stored session.' },
    storeOption,
    {
      name: 'cwd',
      short: 'C',
      type: 'string',
      value: 'dir',
      description: 'Only the sessions of this directory.',
    },
  ],
  examples: [
    'rein sessions',
    'rein sessions --cwd . --json',
    'rein sessions export --store postgres://rein@db/rein --all --out ~/.rein/sessions',
    'rein sessions import --store postgres://rein@db/rein ~/.rein/sessions',
  ],
};

/** `rein show`. */
export const showSpec: CommandSpec = {
  name: 'show',
  load: async () => (await import('./session-commands.ts')).showCommand,
  summary: 'Print a readable transcript of a stored session.',
  usage: ['show [options] <id>', 'show [options] --last'],
  maxPositionals: 1,
  options: [jsonOption('Print the raw durable events as JSON lines instead.'), lastOption, storeOption],
  examples: [
    'rein show 6f1c2a4e-…',
    'rein show 6f1c',
    'rein show --last',
    'rein show --json 6f1c2a4e-… | jq .type',
  ],
  notes: [sessionIdNote],
};

/** `rein fork`. */
export const forkSpec: CommandSpec = {
  name: 'fork',
  load: async () => (await import('./session-commands.ts')).forkCommand,
  summary: 'Copy a session up to a turn boundary into a new session and print its id.',
  usage: ['fork [options] <id>', 'fork [options] --last'],
  maxPositionals: 1,
  options: [
    lastOption,
    {
      name: 'salvage',
      type: 'boolean',
      description: 'Fork a log that no longer loads from its last good record.',
    },
    {
      name: 'at',
      type: 'string',
      value: 'turn',
      description: 'Keep turns 1..turn (default: every closed turn).',
    },
    storeOption,
  ],
  examples: [
    'rein fork 6f1c2a4e-…',
    'rein fork 6f1c2a4e-… --at 2',
    'rein run --resume "$(rein fork 6f1c… --at 1)" "try another way"',
  ],
  notes: [
    sessionIdNote,
    'The fork is titled after its parent and the turn it forks at, e.g. "fix the parser (fork at turn 2)".',
  ],
};

/** `rein compact`. */
export const compactSpec: CommandSpec = {
  name: 'compact',
  load: async () => (await import('./session-commands.ts')).compactCommand,
  summary: 'Summarize the older part of a stored session so it fits the context window again.',
  usage: ['compact [options] <id>', 'compact [options] --last'],
  maxPositionals: 1,
  options: [modelOption, lastOption, storeOption],
  notes: [sessionIdNote],
  examples: ['rein compact 6f1c2a4e-…'],
};

/** `rein rm`. */
export const rmSpec: CommandSpec = {
  name: 'rm',
  load: async () => (await import('./session-commands.ts')).rmCommand,
  summary: 'Delete stored sessions.',
  usage: ['rm <id> [<id> …]'],
  maxPositionals: Number.POSITIVE_INFINITY,
  options: [storeOption],
  examples: ['rein rm 6f1c2a4e-…'],
  notes: [sessionIdNote],
};

/** `rein doctor`. */
export const doctorSpec: CommandSpec = {
  name: 'doctor',
  load: async () => (await import('./doctor-command.ts')).doctorCommand,
  summary: 'Check Node, Rein home, provider keys (never printed) and the session store, and say what to fix.',
  usage: ['doctor [options]'],
  maxPositionals: 0,
  options: [jsonOption('Print the checks as JSON.'), storeOption],
  examples: ['rein doctor', 'REIN_HOME=/tmp/rein rein doctor --json'],
};

/** `rein chat` (also bare `rein`, `rein --continue`, `rein --resume <id>`). */
export const chatSpec: CommandSpec = {
  name: 'chat',
  load: async () => (await import('./chat-command.ts')).chatCommand,
  summary: 'Open the interactive terminal UI in this directory (the default command).',
  usage: ['chat [options]', '(no command)', '--continue', '--resume <id>'],
  maxPositionals: 0,
  options: [
    modelOption,
    cwdOption,
    approveOption,
    { name: 'resume', type: 'string', value: 'id', description: 'Open the stored session with this id.' },
    {
      name: 'continue',
      short: 'c',
      type: 'boolean',
      description: 'Open the latest session of this directory.',
    },
  ],
  examples: ['rein', 'rein --continue', 'rein chat --model deepseek/deepseek-chat --approve auto-edit'],
  notes: [
    'Enter sends (while a turn runs it steers the turn at its next step); Alt+Enter or Ctrl-Q queues for the next turn; ' +
      'Shift+Tab edits the queue; Esc stops the turn; Ctrl-C twice quits (the session stays resumable). /help lists the rest.',
    'When stdin or stdout is not a terminal, rein behaves as rein run (the prompt is read from stdin).',
  ],
};

/** `rein web`. */
export const webSpec: CommandSpec = {
  name: 'web',
  load: async () => (await import('./web-command.ts')).webCommand,
  summary: 'Start the local Web UI server and print its URL.',
  usage: ['web [options]'],
  maxPositionals: 0,
  options: [
    {
      name: 'port',
      type: 'string',
      value: 'port',
      description: 'The port to listen on (default: a free one).',
    },
    modelOption,
    cwdOption,
    approveOption,
    storeOption,
  ],
  examples: ['rein web', 'rein web --port 8787 --cwd ~/src/project'],
};

/** `rein mcp`. */
export const mcpSpec: CommandSpec = {
  name: 'mcp',
  load: async () => (await import('./mcp-command.ts')).mcpCommand,
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

/** `rein acp`. */
export const acpSpec: CommandSpec = {
  name: 'acp',
  // Loaded on use: no other command pays for the ACP SDK.
  load: async () => (await import('./acp-command.ts')).acpCommand,
  summary: 'Serve an editor such as Zed over the Agent Client Protocol on stdin/stdout.',
  usage: ['acp [options]'],
  maxPositionals: 0,
  options: [
    modelOption,
    {
      name: 'approve',
      type: 'string',
      value: 'mode',
      description:
        'The approval mode new sessions start in (ask by default); the editor can switch it per session.',
    },
  ],
  examples: ['rein acp', 'rein acp --model deepseek/deepseek-chat --approve auto-edit'],
  notes: [
    'Started by the editor, not by hand: stdout carries only protocol messages; notices and errors go to stderr.',
    "Each session works in the directory the editor sends as its cwd. See docs/editors.md for Zed's settings.",
  ],
};

/** `rein config`. */
export const configSpec: CommandSpec = {
  name: 'config',
  load: async () => (await import('./config-command.ts')).configCommand,
  summary: 'Read and change the config file: get, set, unset, set-key, path, edit.',
  usage: [
    'config get [key]',
    'config set <key> <value>',
    'config unset <key>',
    'config set-key <provider>',
    'config path',
    'config edit',
  ],
  maxPositionals: 3,
  options: [],
  examples: [
    'rein config set defaultModel deepseek/deepseek-chat',
    'rein config set providers.ollama.baseUrl http://127.0.0.1:11434/v1',
    'rein config set-key anthropic',
    'printf %s "$KEY" | rein config set-key openai',
    'rein config get providers',
    'rein config unset defaultModel',
    'rein config edit',
  ],
  notes: [
    'Keys are dotted paths into config.json (defaultModel, providers.<name>.baseUrl, models.<provider/model>.contextWindow, …). ' +
      'A value that parses as JSON (a number, true, an object) is stored as such; anything else as a string.',
    'set-key reads the key from a hidden prompt on a terminal, or the first line of standard input; the file is kept at mode 0600 ' +
      'and get never prints a saved key, only its last four characters.',
    'edit opens $VISUAL or $EDITOR (vi by default) and checks the file when the editor exits.',
  ],
};

/** Every command, in the order the general help lists them. */
export const commandSpecs: readonly CommandSpec[] = [
  chatSpec,
  runSpec,
  sessionsSpec,
  showSpec,
  forkSpec,
  compactSpec,
  rmSpec,
  doctorSpec,
  configSpec,
  webSpec,
  mcpSpec,
  acpSpec,
];

/** The spec of a command name, if it exists. */
export function commandSpec(name: string): CommandSpec | undefined {
  return commandSpecs.find((spec) => spec.name === name);
}
