import type { CommandSpec } from './command-line.ts';
import { optionsOf } from './command-line.ts';
import { commandSpecs } from './command-specs.ts';

/** The general help: every command with its summary, the global options and examples. */
export function generalHelp(): string {
  const width = Math.max(...commandSpecs.map((spec) => spec.name.length));
  return [
    'rein — an agent harness for your terminal and browser',
    '',
    'Usage:',
    '  rein [command] [options]',
    '  rein -p "prompt" [run options]      (same as rein run)',
    '',
    'Commands:',
    ...commandSpecs.map((spec) => `  ${spec.name.padEnd(width)}  ${spec.summary}`),
    '',
    'Options:',
    '  -h, --help     Show help (also: rein <command> --help, rein help <command>).',
    '  -V, --version  Print the version.',
    '',
    'Environment:',
    "  REIN_HOME                 Rein's home: config and sessions (default ~/.rein).",
    '  DEEPSEEK_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY',
    '                            Provider keys; without any, the offline demo model is used.',
    '',
    'Examples:',
    '  rein                                   open the terminal UI in this directory',
    '  rein --continue                        reopen the latest session of this directory',
    '  rein web                               start the Web UI',
    '  rein run "summarize README.md"',
    '  rein -p "list the TODOs" --json | jq -c .type',
    '  rein sessions',
    '  rein doctor',
    '',
  ].join('\n');
}

/** The help of one command: synopsis, options with their values and descriptions, notes, examples. */
export function commandHelp(spec: CommandSpec): string {
  const rows = optionsOf(spec).map((option) => {
    const names = `${option.short !== undefined ? `-${option.short}, ` : '    '}--${option.name}${option.type === 'string' ? ` <${option.value ?? 'value'}>` : ''}`;
    return { names, description: option.description };
  });
  const width = Math.max(...rows.map((row) => row.names.length));
  return [
    `rein ${spec.name} — ${spec.summary}`,
    '',
    'Usage:',
    ...spec.usage.map((line) => `  ${line.startsWith('(') || line.includes('|') ? line : `rein ${line}`}`),
    '',
    'Options:',
    ...rows.map((row) => `  ${row.names.padEnd(width)}  ${row.description}`),
    ...(spec.notes !== undefined ? ['', ...spec.notes.flatMap((note) => [note])] : []),
    '',
    'Examples:',
    ...spec.examples.map((example) => `  ${example}`),
    '',
  ].join('\n');
}

/** The short usage printed after a command-line error. */
export function shortUsage(spec: CommandSpec | undefined): string {
  if (spec === undefined) {
    return `Usage: rein [command] [options]\nCommands: ${commandSpecs.map((candidate) => candidate.name).join(', ')}\nRun 'rein --help' for details.\n`;
  }
  return `Usage:\n${spec.usage.map((line) => `  ${line.startsWith('(') || line.includes('|') ? line : `rein ${line}`}`).join('\n')}\nRun 'rein ${spec.name} --help' for every option.\n`;
}
