/** A writable the CLI prints to (process.stdout / process.stderr, or a capture in tests). */
export interface CliWritable {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** The process edges a command uses: streams, environment, working directory. */
export interface CliIo {
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: CliWritable;
  readonly stderr: CliWritable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** The real process edges. */
export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: tolerantOfClosedReader(process.stdout),
    stderr: tolerantOfClosedReader(process.stderr),
    env: process.env,
    cwd: process.cwd(),
  };
}

/**
 * Wraps a process stream so that a reader that went away (`rein run --json | head -1`: EPIPE) stops the
 * output instead of crashing the run; the run still finishes and its log is flushed.
 */
function tolerantOfClosedReader(stream: NodeJS.WriteStream): CliWritable {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed = true;
  });
  return {
    write: (text: string) => (closed ? false : stream.write(text)),
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
  };
}
/** Reads a whole stream as UTF-8 text. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of stream)
    parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(parts).toString('utf8');
}
