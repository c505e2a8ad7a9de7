import { Readable, Writable } from 'node:stream';
import { serveAcp } from '../acp/index.ts';
import { exitCodes } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import type { ParsedCommand } from './command-line.ts';
import { stringOption } from './command-line.ts';
import { approvalModeOption, checkModel } from './command-options.ts';
import { reinVersion } from './version.ts';

/**
 * `rein acp`: serves one ACP client (an editor) on stdin/stdout until it disconnects. Stdout carries
 * protocol messages only; everything else goes to stderr.
 */
export async function acpCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const { values } = parsed;
  const approve = approvalModeOption('acp', values.approve);
  const model = stringOption(values, 'model');
  if (model !== undefined) checkModel('acp', model);
  // Anything that logs through console.log would corrupt the protocol stream: it goes to stderr instead.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  await serveAcp({
    // The protocol owns the process's own byte streams (with their backpressure), not the CLI's text writers.
    input: Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
    output: Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    env: io.env,
    ...(model !== undefined ? { model } : {}),
    ...(approve !== undefined ? { approve } : {}),
    version: reinVersion(),
    log: (line) => io.stderr.write(`${line}\n`),
  });
  return exitCodes.ok;
}
