import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import picomatch from 'picomatch';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { boundForModel, pathArgument } from './builtin-settings.ts';
import { looksBinary } from './file-access.ts';
import type { WalkedFile } from './workspace-walker.ts';
import { walkFiles } from './workspace-walker.ts';

/** Arguments of `grep`. */
export interface GrepArgs {
  pattern: string;
  path?: string;
  glob?: string;
  ignore_case?: boolean;
  max_results?: number;
  include_ignored?: boolean;
}

/** Matches shown when the call names no cap. */
export const defaultGrepResults = 100;

/** The largest cap a call may ask for. */
export const maxGrepResults = 1000;

/** Characters of a matching line shown before it is cut. */
const maxMatchLineChars = 300;

/** Files read at once while searching. */
const readBatch = 200;

/** `grep`: a regular expression over the files below a path, answering `file:line:text`. */
export function createGrepTool(settings: BuiltinSettings): Tool<GrepArgs> {
  const { workspace } = settings;
  return defineTool<GrepArgs>({
    name: 'grep',
    description:
      'Search file contents with a JavaScript regular expression. Searches path (a file or directory, ' +
      'default: the workspace root), optionally only files matching glob (e.g. "**/*.ts"). Skips binary ' +
      'files, .git and files ignored by .gitignore (unless include_ignored). Answers "path:line:text", at ' +
      `most max_results matches (default ${defaultGrepResults}).`,
    effect: 'read',
    category: 'search',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', minLength: 1, description: 'JavaScript regular expression.' },
        path: { type: 'string', description: 'File or directory to search.' },
        glob: { type: 'string', description: 'Only search files whose path below path matches this glob.' },
        ignore_case: { type: 'boolean', description: 'Match case-insensitively.' },
        max_results: {
          type: 'integer',
          minimum: 1,
          maximum: maxGrepResults,
          description: 'Cap of matches shown.',
        },
        include_ignored: { type: 'boolean', description: 'Also search files that .gitignore ignores.' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    paths: (args) => pathArgument(args, 'path', '.'),
    isConcurrencySafe: () => true,
    async execute(args, context) {
      let regex: RegExp;
      try {
        regex = new RegExp(args.pattern, args.ignore_case === true ? 'i' : '');
      } catch (error) {
        throw new ToolError(
          'INVALID_REGEX',
          `pattern is not a valid regular expression: ${(error as Error).message}`,
        );
      }
      const cap = args.max_results ?? defaultGrepResults;
      const requested = args.path ?? '.';
      const checked = workspace.recheck(workspace.check(requested, 'read'), 'read');
      let isDirectory: boolean;
      try {
        isDirectory = (await stat(checked.real)).isDirectory();
      } catch {
        throw new ToolError('FILE_NOT_FOUND', `${requested} does not exist`);
      }
      const files: WalkedFile[] = [];
      if (isDirectory) {
        const include = args.glob !== undefined ? picomatch(args.glob, { dot: true }) : undefined;
        for await (const file of walkFiles(workspace, checked.real, {
          respectGitignore: args.include_ignored !== true,
          signal: context.signal,
        })) {
          if (include === undefined || include(file.relativeToBase)) files.push(file);
        }
      } else {
        files.push({ real: checked.real, display: checked.display, relativeToBase: checked.display });
      }
      const lines: string[] = [];
      let matches = 0;
      let matchedFiles = 0;
      let skipped = 0;
      let stopped = false;
      for (let start = 0; start < files.length && !stopped; start += readBatch) {
        if (context.signal.aborted) throw new ToolError('ABORTED', 'grep was aborted');
        const batch = files.slice(start, start + readBatch);
        await new Promise((resolve) => setImmediate(resolve));
        const contents = batch.map((file) => readSearchable(file.real, settings.maxFileBytes));
        for (let index = 0; index < batch.length && !stopped; index++) {
          const text = contents[index];
          if (text === undefined) {
            skipped++;
            continue;
          }
          let fileMatched = false;
          let lineNumber = 0;
          for (const line of text.split('\n')) {
            lineNumber++;
            if (!regex.test(line)) continue;
            if (!fileMatched) matchedFiles++;
            fileMatched = true;
            matches++;
            if (lines.length >= cap) {
              stopped = true;
              break;
            }
            const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
            const shown =
              clean.length > maxMatchLineChars ? `${clean.slice(0, maxMatchLineChars)}... [line cut]` : clean;
            lines.push(`${batch[index]!.display}:${lineNumber}:${shown}`);
          }
        }
      }
      const notes: string[] = [];
      if (stopped)
        notes.push(`(stopped after ${cap} matches; narrow the pattern, path or glob for the rest)`);
      if (skipped > 0) notes.push(`(${skipped} binary, unreadable or over-size files skipped)`);
      const body =
        lines.length === 0
          ? `No matches for /${args.pattern}/ in ${checked.display} (${files.length} files searched).`
          : lines.join('\n');
      const bounded = boundForModel(settings, [body, ...notes].join('\n'));
      return {
        content: bounded.text,
        meta: {
          ...bounded.meta,
          path: checked.display,
          ...(stopped ? {} : { matches }),
          shown: lines.length,
          files: files.length,
          matchedFiles,
        },
      };
    },
  });
}

// Synchronous on purpose: for many small files it is several times faster than the promise API, and the
// caller yields to the event loop between batches so cancellation is still seen promptly.
function readSearchable(path: string, maxBytes: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > maxBytes) return undefined;
    const buffer = Buffer.alloc(info.size);
    let read = 0;
    while (read < buffer.length) {
      const count = readSync(fd, buffer, read, buffer.length - read, read);
      if (count === 0) break;
      read += count;
    }
    const content = buffer.subarray(0, read);
    return looksBinary(content) ? undefined : content.toString('utf8');
  } catch {
    // Vanished or unreadable since the walk: counted as skipped.
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
