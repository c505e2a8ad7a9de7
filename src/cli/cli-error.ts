import { HarnessError } from '../harness-error.ts';

/** The exit codes of the `rein` command. */
export const exitCodes = {
  /** The turn completed (or the command succeeded). */
  ok: 0,
  /** An error; its code and message were printed on stderr. */
  error: 1,
  /** The command line was wrong; the usage was printed. */
  usage: 2,
  /** The model stopped at its output limit. */
  maxTokens: 3,
  /** A budget was reached: the work is paused and `rein run --resume <id> --budget-…` continues it. */
  budget: 4,
  /** The user interrupted the run (Ctrl-C). */
  aborted: 130,
} as const;

/** A failure the CLI reports as one line on stderr, with its exit code (and the usage when `usageOf` is set). */
export class CliError extends HarnessError {
  readonly exitCode: number;
  /** The command whose usage should follow the message, if any. */
  readonly usageOf: string | undefined;

  constructor(
    code: string,
    message: string,
    options: { exitCode?: number; usageOf?: string; cause?: unknown } = {},
  ) {
    super(code, message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'CliError';
    this.exitCode = options.exitCode ?? exitCodes.error;
    this.usageOf = options.usageOf;
  }
}

/** A wrong command line: exit code 2, usage shown. */
export function usageError(command: string, message: string): CliError {
  return new CliError('USAGE', message, { exitCode: exitCodes.usage, usageOf: command });
}
