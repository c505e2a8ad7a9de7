import { parseArgs } from 'node:util';
import { usageError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';

/** One option of a command. */
export interface OptionSpec {
  readonly name: string;
  readonly short?: string;
  readonly type: 'string' | 'boolean';
  /** The placeholder shown in help for a string option's value. */
  readonly value?: string;
  /**
   * A boolean option that may carry a number: `--thinking`, `--thinking=8000` or `--thinking 8000`
   * (only a whole number right after it is taken as its value). Its value is `true` or the number text.
   */
  readonly optionalNumber?: boolean;
  /** A string option that may be given more than once; its values are collected in `repeated`. */
  readonly repeatable?: boolean;
  readonly description: string;
}

/** A command: its options, positional arguments, help text and examples. */
export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  /** The synopsis lines, without the leading `rein `. */
  readonly usage: readonly string[];
  readonly options: readonly OptionSpec[];
  /** The most positional arguments accepted (Infinity for any number). */
  readonly maxPositionals: number;
  readonly examples: readonly string[];
  /** Extra paragraphs of help. */
  readonly notes?: readonly string[];
  /**
   * Loads the command's module and returns its handler. A dynamic import, so that `rein --help` or one
   * command never loads another command's code (a new command is one spec here plus one file).
   */
  readonly load: () => Promise<CommandHandler>;
}

/** Runs one parsed command and resolves its exit code. */
export type CommandHandler = (parsed: ParsedCommand, io: CliIo) => Promise<number>;

/** The parsed command line of one command. */
export interface ParsedCommand {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
  /** Every value of each repeatable option, in command-line order (its `values` entry is the first). */
  readonly repeated?: Readonly<Record<string, readonly string[]>>;
}

const helpOption: OptionSpec = { name: 'help', short: 'h', type: 'boolean', description: 'Show this help.' };

/** The options of a command, with `--help` added. */
export function optionsOf(spec: CommandSpec): readonly OptionSpec[] {
  return [...spec.options, helpOption];
}

/**
 * Parses a command's arguments with `node:util` parseArgs, then checks them against the spec itself so
 * that every mistake (unknown option, missing value, value given to a flag, too many arguments) is a
 * usage error naming the command.
 */
export function parseCommand(spec: CommandSpec, argv: readonly string[]): ParsedCommand {
  const options = optionsOf(spec);
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const option of options) {
    config[option.name] =
      option.short !== undefined ? { type: option.type, short: option.short } : { type: option.type };
  }
  const parsed = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string | boolean | undefined> = {};
  const repeated: Record<string, string[]> = {};
  const taken = new Set<number>();
  for (const [position, token] of parsed.tokens.entries()) {
    if (token.kind !== 'option') continue;
    const option = options.find((candidate) => candidate.name === token.name);
    if (option === undefined) {
      throw usageError(spec.name, `unknown option '${token.rawName}' for 'rein ${spec.name}'`);
    }
    if (option.type === 'string') {
      if (
        token.value === undefined ||
        (token.inlineValue !== true &&
          token.value.startsWith('-') &&
          token.value.length > 1 &&
          !/^-\d/.test(token.value))
      ) {
        throw usageError(spec.name, `option '${token.rawName}' needs a value (${option.value ?? 'value'})`);
      }
      if (option.repeatable === true) {
        (repeated[option.name] ??= []).push(token.value);
        values[option.name] ??= token.value;
        continue;
      }
      if (values[option.name] !== undefined) {
        throw usageError(spec.name, `option '${token.rawName}' was given more than once`);
      }
      values[option.name] = token.value;
    } else if (option.optionalNumber === true) {
      const next = parsed.tokens[position + 1];
      if (token.inlineValue === true) {
        if (!/^\d+$/.test(token.value ?? '')) {
          throw usageError(
            spec.name,
            `option '${token.rawName}' takes a whole number, not '${token.value ?? ''}'`,
          );
        }
        values[option.name] = token.value;
      } else if (next?.kind === 'positional' && /^\d+$/.test(next.value)) {
        values[option.name] = next.value;
        taken.add(next.index);
      } else {
        values[option.name] = true;
      }
    } else {
      if (token.inlineValue === true) {
        throw usageError(spec.name, `option '${token.rawName}' takes no value`);
      }
      values[option.name] = true;
    }
  }
  // Positionals an option took as its value are not arguments.
  const positionals = parsed.tokens
    .filter((token) => token.kind === 'positional' && !taken.has(token.index))
    .map((token) => (token as { value: string }).value);
  if (values.help !== true && positionals.length > spec.maxPositionals) {
    const extra = positionals[spec.maxPositionals]!;
    throw usageError(spec.name, `unexpected argument '${extra}' for 'rein ${spec.name}'`);
  }
  return { values, positionals, repeated };
}

/** Reads a positive integer option; a usage error for anything else. */
export function positiveIntegerOption(
  spec: CommandSpec,
  values: ParsedCommand['values'],
  name: string,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const text = String(raw);
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) {
    throw usageError(spec.name, `option '--${name}' needs a positive whole number, not '${text}'`);
  }
  return value;
}

/** Reads a string option. */
export function stringOption(values: ParsedCommand['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
