import { exitCodes, usageError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import type { ParsedCommand } from './command-line.ts';
import { stringOption } from './command-line.ts';
import { approvalModeOption, checkModel } from './command-options.ts';
import { runCommand, workspaceFor } from './run-command.ts';

/**
 * `rein chat` (and bare `rein`, `rein --continue`, `rein --resume <id>`): the interactive terminal UI,
 * loaded only here; without a terminal on stdin and stdout it is `rein run` with the same options.
 */
export async function chatCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (io.stdin.isTTY !== true || io.stdout.isTTY !== true) return runCommand(parsed, io);
  const { values } = parsed;
  const approve = approvalModeOption('chat', values.approve);
  const model = stringOption(values, 'model');
  if (model !== undefined) checkModel('chat', model);
  const resumeOption = stringOption(values, 'resume');
  const continueLatest = values.continue === true;
  if (resumeOption !== undefined && continueLatest)
    throw usageError('chat', "use either '--resume <id>' or '--continue', not both");
  const { cwd, resumeId } = await workspaceFor(io, stringOption(values, 'cwd'), resumeOption);
  const { runChat } = await import('../tui/index.ts');
  const code = await runChat({
    cwd,
    env: io.env,
    ...(model !== undefined ? { model } : {}),
    ...(approve !== undefined ? { approve } : {}),
    ...(resumeId !== undefined ? { resumeId } : {}),
    continueLatest,
    report: (line) => io.stderr.write(`${line}\n`),
  });
  return code === 0 ? exitCodes.ok : code;
}
