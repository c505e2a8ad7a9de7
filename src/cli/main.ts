import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { HarnessError } from '../harness-error.ts';
import { packageVersion } from '../package-root.ts';
import { CliError, exitCodes } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import { processIo } from './cli-io.ts';
import type { CommandSpec } from './command-line.ts';
import { parseCommand } from './command-line.ts';
import { chatSpec, commandSpec, runSpec } from './command-specs.ts';
import { commandHelp, generalHelp, shortUsage } from './help-text.ts';

/** Runs the `rein` command line and resolves its exit code; errors are printed, never thrown. */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let spec: CommandSpec | undefined;
  try {
    const first = argv[0];
    let rest = argv.slice(1);
    if (first === undefined) {
      spec = chatSpec;
      rest = [];
    } else if (first === '--help' || first === '-h') {
      io.stdout.write(generalHelp());
      return exitCodes.ok;
    } else if (first === '--version' || first === '-V') {
      io.stdout.write(`${packageVersion()}\n`);
      return exitCodes.ok;
    } else if (first === 'help') {
      const topic = argv[1] === undefined ? undefined : commandSpec(argv[1]);
      if (argv[1] !== undefined && topic === undefined) {
        throw new CliError('USAGE', `unknown command '${argv[1]}'`, {
          exitCode: exitCodes.usage,
          usageOf: '',
        });
      }
      io.stdout.write(topic === undefined ? generalHelp() : commandHelp(topic));
      return exitCodes.ok;
    } else if (first.startsWith('-')) {
      // `rein -p "…"` (and any run option before it) is `rein run`; anything else is a mistake.
      const name = first.replace(/^-+/, '').split('=')[0];
      const isRunOption = runSpec.options.some((option) => option.name === name || option.short === name);
      if (!isRunOption) {
        throw new CliError('USAGE', `unknown option '${first}'`, { exitCode: exitCodes.usage, usageOf: '' });
      }
      // `rein --continue` / `rein --resume <id>` without a prompt open the chat.
      const { wantsChat } = await import('./chat-arguments.ts');
      spec = wantsChat(argv) ? chatSpec : runSpec;
      rest = [...argv];
    } else {
      spec = commandSpec(first);
      if (spec === undefined) {
        throw new CliError('USAGE', `unknown command '${first}'`, { exitCode: exitCodes.usage, usageOf: '' });
      }
    }
    const parsed = parseCommand(spec, rest);
    if (parsed.values.help === true) {
      io.stdout.write(commandHelp(spec));
      return exitCodes.ok;
    }
    // `--store` selects the session store exactly as REIN_STORE does, for whatever the command opens.
    const store = parsed.values.store;
    const commandIo = typeof store === 'string' ? { ...io, env: { ...io.env, REIN_STORE: store } } : io;
    const handler = await spec.load();
    return await handler(parsed, commandIo);
  } catch (error) {
    return reportError(error, io, spec);
  }
}

/** Prints an error as one line (plus the usage for command-line mistakes) and returns its exit code. */
export function reportError(error: unknown, io: CliIo, spec?: CommandSpec): number {
  if (error instanceof CliError) {
    // Command-line mistakes read as advice; every other failure names its code.
    io.stderr.write(
      error.usageOf !== undefined
        ? `rein: ${error.message}\n`
        : `rein: error ${error.code}: ${oneLine(error.message)}\n`,
    );
    if (error.usageOf !== undefined)
      io.stderr.write(shortUsage(error.usageOf === '' ? undefined : (commandSpec(error.usageOf) ?? spec)));
    return error.exitCode;
  }
  if (error instanceof HarnessError) {
    io.stderr.write(`rein: error ${error.code}: ${oneLine(error.message)}\n`);
    return exitCodes.error;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`rein: error UNKNOWN: ${oneLine(message)}\n`);
  return exitCodes.error;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

// Run when executed directly (bin/rein.js, `tsx src/cli/main.ts`), not when imported.
if (isEntryPoint()) await runMain();

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    // An argv[1] that is not a file (e.g. `node -e`) is not this module.
    return false;
  }
}

/** The process entry: runs the command line, then exits with its code once output is flushed. */
export async function runMain(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const code = await runCli(argv);
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
  process.exit(code);
}
