import { closeSync } from 'node:fs';
import type PicomatchModule from 'picomatch';
import { lazyModule } from '../../llm/lazy-module.ts';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { boundForModel, pathArgument } from './builtin-settings.ts';
import { looksBinary, readWhole } from './file-access.ts';
import { openVerified } from './verified-open.ts';
import type { SkippedEntry, WalkOpened } from './workspace-walker.ts';
import { describeSkipped, walkFiles } from './workspace-walker.ts';

const picomatch = lazyModule<typeof PicomatchModule>('picomatch');

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
      const opened = openVerified(workspace, requested);
      const checked = opened.resolved;
      const lines: string[] = [];
      const skippedEntries: SkippedEntry[] = [];
      let files = 0;
      let matches = 0;
      let matchedFiles = 0;
      let skipped = 0;
      let stopped = false;
      // Searches one open file, setting `stopped` once the cap is reached.
      const search = (file: WalkOpened | undefined, display: string): void => {
        files++;
        const text = file === undefined ? undefined : searchableText(file, settings.maxFileBytes);
        if (text === undefined) {
          skipped++;
          return;
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
            return;
          }
          const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
          const shown =
            clean.length > maxMatchLineChars ? `${clean.slice(0, maxMatchLineChars)}... [line cut]` : clean;
          lines.push(`${display}:${lineNumber}:${shown}`);
        }
      };
      try {
        if (opened.stat.isDirectory()) {
          const include = args.glob !== undefined ? picomatch()(args.glob, { dot: true }) : undefined;
          for await (const file of walkFiles(
            workspace,
            { fd: opened.fd, path: checked.real },
            {
              respectGitignore: args.include_ignored !== true,
              signal: context.signal,
              skipped: skippedEntries,
            },
          )) {
            if (include !== undefined && !include(file.relativeToBase)) continue;
            // Files are read synchronously (much faster for many small ones); the event loop gets a turn
            // every batch so cancellation is still seen promptly.
            if (files % readBatch === readBatch - 1) {
              await new Promise((resolve) => setImmediate(resolve));
              if (context.signal.aborted) throw new ToolError('ABORTED', 'grep was aborted');
            }
            const handle = file.open();
            try {
              search(handle, file.display);
            } finally {
              if (handle !== undefined) closeSync(handle.fd);
            }
            if (stopped) break;
          }
        } else {
          search({ fd: opened.fd, stat: opened.stat }, checked.display);
        }
      } finally {
        closeSync(opened.fd);
      }
      const notes: string[] = [];
      if (stopped)
        notes.push(`(stopped after ${cap} matches; narrow the pattern, path or glob for the rest)`);
      if (skipped > 0) notes.push(`(${skipped} binary, unreadable or over-size files skipped)`);
      notes.push(...describeSkipped(skippedEntries));
      const body =
        lines.length === 0
          ? `No matches for /${args.pattern}/ in ${checked.display} (${files} files searched).`
          : lines.join('\n');
      const bounded = boundForModel(settings, [body, ...notes].join('\n'));
      return {
        content: bounded.text,
        meta: {
          ...bounded.meta,
          path: checked.display,
          ...(stopped ? {} : { matches }),
          shown: lines.length,
          files,
          skipped: skippedEntries,
          matchedFiles,
        },
      };
    },
  });
}

function searchableText(file: WalkOpened, maxBytes: number): string | undefined {
  if (!file.stat.isFile() || file.stat.size > maxBytes) return undefined;
  try {
    const content = readWhole(file.fd, file.stat.size);
    return looksBinary(content) ? undefined : content.toString('utf8');
  } catch {
    // Unreadable (e.g. an I/O error): counted as skipped.
    return undefined;
  }
}
