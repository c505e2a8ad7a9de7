import type { ParsedCommand } from './command-line.ts';
import { parseCommand } from './command-line.ts';
import { chatSpec, runSpec } from './command-specs.ts';

/** True for a command line of chat options only (no prompt): `rein --continue`, `rein --resume <id>`. */
export function wantsChat(argv: readonly string[]): boolean {
  let parsed: ParsedCommand;
  try {
    parsed = parseCommand(runSpec, argv);
  } catch {
    // Not even a valid run command line: let `rein run` report the mistake.
    return false;
  }
  if (parsed.positionals.length > 0) return false;
  return Object.keys(parsed.values).every((name) => chatSpec.options.some((option) => option.name === name));
}
