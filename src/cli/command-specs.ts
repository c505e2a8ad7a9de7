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
    'shell commands ask), yolo (everything runs), read-only (changes are denied).',
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
    jsonOption(
      'Print every durable session event as one JSON object per line ({ seq, type, time, data }), plus live lines marked { live: true, type, data }.',
    ),
    modelOption,
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
  ],
  examples: [
    'rein run "summarize README.md"',
    'rein -p "what does src/index.ts export?" --model deepseek/deepseek-chat',
    'rein run --approve read-only - < task.md',
    'rein run --json --approve yolo "run the tests and fix what fails" > events.jsonl',
    'rein run --continue "now add a test for it"',
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
  summary: 'List stored sessions (id, title, cwd, updated, turns, cost).',
  usage: ['sessions [options]'],
  maxPositionals: 0,
  options: [
    jsonOption('Print the rows as a JSON array.'),
    {
      name: 'cwd',
      short: 'C',
      type: 'string',
      value: 'dir',
      description: 'Only the sessions of this directory.',
    },
  ],
  examples: ['rein sessions', 'rein sessions --cwd . --json'],
};

/** `rein show`. */
export const showSpec: CommandSpec = {
  name: 'show',
  summary: 'Print a readable transcript of a stored session.',
  usage: ['show [options] <id>', 'show [options] --last'],
  maxPositionals: 1,
  options: [jsonOption('Print the raw durable events as JSON lines instead.'), lastOption],
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
  summary: 'Summarize the older part of a stored session so it fits the context window again.',
  usage: ['compact [options] <id>', 'compact [options] --last'],
  maxPositionals: 1,
  options: [modelOption, lastOption],
  notes: [sessionIdNote],
  examples: ['rein compact 6f1c2a4e-…'],
};

/** `rein rm`. */
export const rmSpec: CommandSpec = {
  name: 'rm',
  summary: 'Delete stored sessions.',
  usage: ['rm <id> [<id> …]'],
  maxPositionals: Number.POSITIVE_INFINITY,
  options: [],
  examples: ['rein rm 6f1c2a4e-…'],
  notes: [sessionIdNote],
};

/** `rein doctor`. */
export const doctorSpec: CommandSpec = {
  name: 'doctor',
  summary: 'Check Node, Rein home, provider keys (never printed) and the session store, and say what to fix.',
  usage: ['doctor [options]'],
  maxPositionals: 0,
  options: [jsonOption('Print the checks as JSON.')],
  examples: ['rein doctor', 'REIN_HOME=/tmp/rein rein doctor --json'],
};

/** `rein web`. */
export const webSpec: CommandSpec = {
  name: 'web',
  summary: 'Start the local Web UI server and print its URL (the default command).',
  usage: ['web [options]', '(no command)'],
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
  ],
  examples: ['rein', 'rein web --port 8787 --cwd ~/src/project'],
};

/** `rein config`. */
export const configSpec: CommandSpec = {
  name: 'config',
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
  runSpec,
  sessionsSpec,
  showSpec,
  forkSpec,
  compactSpec,
  rmSpec,
  doctorSpec,
  configSpec,
  webSpec,
];

/** The spec of a command name, if it exists. */
export function commandSpec(name: string): CommandSpec | undefined {
  return commandSpecs.find((spec) => spec.name === name);
}
