import { closeSync, readSync } from 'node:fs';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { pathArgument } from './builtin-settings.ts';
import { defaultOutputMaxBytes } from './bounded-output.ts';
import { binarySniffBytes, looksBinary } from './file-access.ts';
import { openVerified } from './verified-open.ts';

/** Arguments of `read_file`. */
export interface ReadFileArgs {
  path: string;
  offset?: number;
  limit?: number;
}

/** Lines shown when the call gives no limit. */
export const defaultReadLineLimit = 2000;

/** Characters of one line shown before it is cut. */
export const maxReadLineChars = 2000;

const chunkBytes = 64 * 1024;

/** `read_file`: numbered lines of a text file, a window at a time, refusing binary files. */
export function createReadFileTool(settings: BuiltinSettings): Tool<ReadFileArgs> {
  const { workspace } = settings;
  return defineTool<ReadFileArgs>({
    name: 'read_file',
    description:
      'Read a text file from the workspace. Returns numbered lines ("<line>\\t<text>"). Use offset (1-based ' +
      `line) and limit to page through long files; by default the first ${defaultReadLineLimit} lines are shown. ` +
      'Binary files are refused.',
    effect: 'read',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the workspace root or absolute.' },
        offset: { type: 'integer', minimum: 1, description: 'First line to show (1-based).' },
        limit: { type: 'integer', minimum: 1, description: 'Most lines to show.' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    paths: (args) => pathArgument(args),
    isConcurrencySafe: () => true,
    async execute(args, context) {
      const offset = args.offset ?? 1;
      const limit = args.limit ?? defaultReadLineLimit;
      const byteBudget = (settings.outputLimit.maxBytes ?? defaultOutputMaxBytes) - 300;
      const opened = openVerified(workspace, args.path);
      const checked = opened.resolved;
      try {
        if (opened.stat.isDirectory()) {
          throw new ToolError(
            'IS_A_DIRECTORY',
            `${args.path} is a directory; use list_dir to see its entries`,
          );
        }
        if (!opened.stat.isFile()) throw new ToolError('NOT_A_FILE', `${args.path} is not a regular file`);
        // An editor serving the session answers with its buffer (unsaved changes included).
        const editor = await settings.editorFiles?.readTextFile(checked.real, context);
        const source = editor !== undefined ? Buffer.from(editor) : undefined;
        const size = source?.length ?? opened.stat.size;
        const window = readWindow(
          source !== undefined
            ? (buffer, position) => source.copy(buffer, 0, position, position + buffer.length)
            : (buffer, position) => readSync(opened.fd, buffer, 0, buffer.length, position),
          offset,
          limit,
          byteBudget,
          context.signal,
        );
        if (window.binary) {
          throw new ToolError(
            'BINARY_FILE',
            `${args.path} is a binary file (${size} bytes); read_file shows text files only`,
          );
        }
        const meta = {
          path: checked.display,
          bytes: size,
          startLine: offset,
          endLine: window.lastLine,
        };
        if (size === 0) return { content: `${checked.display} is empty.`, meta };
        if (window.lines.length === 0) {
          return {
            content: `${checked.display} has ${window.seenLines} lines; offset ${offset} is past the end.`,
            meta,
          };
        }
        let footer = '';
        if (window.more) {
          const reason = window.stoppedByBytes ? 'the output cap was reached' : `the limit of ${limit} lines`;
          footer =
            `\n(showing lines ${offset}-${window.lastLine} of a ${size}-byte file; ${reason}. ` +
            `Continue with offset=${window.lastLine + 1}.)`;
        }
        return { content: window.lines.join('\n') + footer, meta };
      } finally {
        closeSync(opened.fd);
      }
    },
  });
}

interface ReadWindow {
  lines: string[];
  lastLine: number;
  seenLines: number;
  more: boolean;
  stoppedByBytes: boolean;
  binary: boolean;
}

// Streams the file line by line, keeping only the requested window, so huge files cost only what is shown.
function readWindow(
  readAt: (buffer: Buffer, position: number) => number,
  offset: number,
  limit: number,
  byteBudget: number,
  signal: AbortSignal,
): ReadWindow {
  const window: ReadWindow = {
    lines: [],
    lastLine: offset - 1,
    seenLines: 0,
    more: false,
    stoppedByBytes: false,
    binary: false,
  };
  const buffer = Buffer.alloc(chunkBytes);
  let position = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let shownBytes = 0;
  let lineNumber = 0;
  let done = false;
  let pendingTotal = 0;
  const take = (raw: Buffer, lineBytes: number): void => {
    lineNumber++;
    window.seenLines = lineNumber;
    if (lineNumber < offset) return;
    if (window.lines.length >= limit) {
      window.more = true;
      done = true;
      return;
    }
    let text = raw.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.length > maxReadLineChars) {
      text = `${text.slice(0, maxReadLineChars)}... [line cut; the whole line is ${lineBytes} bytes]`;
    }
    const rendered = `${String(lineNumber).padStart(6)}\t${text}`;
    const cost = Buffer.byteLength(rendered) + 1;
    if (shownBytes + cost > byteBudget && window.lines.length > 0) {
      window.more = true;
      window.stoppedByBytes = true;
      done = true;
      return;
    }
    shownBytes += cost;
    window.lines.push(rendered);
    window.lastLine = lineNumber;
  };
  while (!done) {
    if (signal.aborted) throw new ToolError('ABORTED', 'read_file was aborted');
    const count = readAt(buffer, position);
    if (position === 0 && looksBinary(buffer.subarray(0, Math.min(count, binarySniffBytes)))) {
      window.binary = true;
      return window;
    }
    if (count === 0) break;
    position += count;
    let start = 0;
    let index = buffer.indexOf(0x0a, start);
    while (index !== -1 && index < count && !done) {
      const piece = buffer.subarray(start, index);
      take(pendingBytes > 0 ? Buffer.concat([...pending, piece]) : piece, pendingTotal + piece.length);
      pending = [];
      pendingBytes = 0;
      pendingTotal = 0;
      start = index + 1;
      index = buffer.indexOf(0x0a, start);
    }
    if (!done && start < count) {
      pendingTotal += count - start;
      // Keep a copy: the read buffer is reused. Lines far beyond what can be shown keep only their head.
      if (pendingBytes < maxReadLineChars * 4 + 4) {
        pending.push(Buffer.from(buffer.subarray(start, count)));
        pendingBytes += count - start;
      }
    }
  }
  if (!done && pendingTotal > 0) take(Buffer.concat(pending), pendingTotal);
  return window;
}
