import type { CliIo } from './cli-io.ts';
import { CliError } from './cli-error.ts';

type RawInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

/**
 * Asks for one line on a terminal without echoing it (for secrets): raw mode, Enter ends the line,
 * Backspace edits, Ctrl-C or Ctrl-D with nothing typed cancels with a `CANCELLED` CliError.
 */
export function readHiddenLine(io: CliIo, prompt: string): Promise<string> {
  const input = io.stdin as RawInput;
  io.stderr.write(prompt);
  return new Promise<string>((resolve, reject) => {
    let typed = '';
    const finish = (error?: Error): void => {
      input.removeListener('data', onData);
      input.setRawMode?.(false);
      input.pause();
      io.stderr.write('\n');
      if (error !== undefined) reject(error);
      else resolve(typed);
    };
    const onData = (data: Buffer | string): void => {
      for (const character of data.toString()) {
        if (character === '\r' || character === '\n') return finish();
        if (character === '\u0003' || (character === '\u0004' && typed === '')) {
          return finish(new CliError('CANCELLED', 'cancelled; nothing was saved', { exitCode: 130 }));
        }
        if (character === '\u007f' || character === '\b') typed = typed.slice(0, -1);
        else if (character >= ' ') typed += character;
      }
    };
    input.setRawMode?.(true);
    input.resume();
    input.on('data', onData);
  });
}
