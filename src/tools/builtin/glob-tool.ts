import { closeSync } from 'node:fs';
import type PicomatchModule from 'picomatch';
import { lazyModule } from '../../llm/lazy-module.ts';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { boundForModel, pathArgument } from './builtin-settings.ts';
import { openVerified } from './verified-open.ts';
import type { SkippedEntry } from './workspace-walker.ts';
import { describeSkipped, walkFiles } from './workspace-walker.ts';

const picomatch = lazyModule<typeof PicomatchModule>('picomatch');

/** Arguments of `glob`. */
export interface GlobArgs {
  pattern: string;
  path?: string;
  include_ignored?: boolean;
}

/** Paths shown before a glob result is cut. */
export const maxGlobResults = 1000;

/** `glob`: files matching a pattern below a directory, honouring `.gitignore` unless told otherwise. */
export function createGlobTool(settings: BuiltinSettings): Tool<GlobArgs> {
  const { workspace } = settings;
  return defineTool<GlobArgs>({
    name: 'glob',
    description:
      'Find files by glob pattern (e.g. "**/*.ts", "src/**/test-*.js"), relative to path (default: the ' +
      'workspace root). Files ignored by .gitignore and the .git directory are skipped unless ' +
      `include_ignored is true. Returns sorted paths, at most ${maxGlobResults}.`,
    effect: 'read',
    category: 'search',
    parameters: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          minLength: 1,
          description: 'Glob pattern, matched against paths below path.',
        },
        path: { type: 'string', description: 'Directory to search in.' },
        include_ignored: { type: 'boolean', description: 'Also list files that .gitignore ignores.' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    paths: (args) => pathArgument(args, 'path', '.'),
    isConcurrencySafe: () => true,
    async execute(args, context) {
      const requested = args.path ?? '.';
      let opened;
      try {
        opened = openVerified(workspace, requested);
      } catch (error) {
        if ((error as { code?: string }).code !== 'FILE_NOT_FOUND') throw error;
        throw new ToolError('NOT_A_DIRECTORY', `${requested} is not an existing directory`);
      }
      const checked = opened.resolved;
      let matches: (path: string) => boolean;
      try {
        matches = picomatch()(args.pattern, { dot: true });
      } catch (error) {
        throw new ToolError(
          'INVALID_PATTERN',
          `the glob pattern cannot be used: ${(error as Error).message}`,
        );
      }
      const found: string[] = [];
      const skipped: SkippedEntry[] = [];
      let total = 0;
      try {
        if (!opened.stat.isDirectory()) {
          throw new ToolError('NOT_A_DIRECTORY', `${requested} is not an existing directory`);
        }
        for await (const file of walkFiles(
          workspace,
          { fd: opened.fd, path: checked.real },
          { respectGitignore: args.include_ignored !== true, signal: context.signal, skipped },
        )) {
          if (!matches(file.relativeToBase)) continue;
          total++;
          if (found.length < maxGlobResults) found.push(file.display);
        }
      } finally {
        closeSync(opened.fd);
      }
      const cut =
        total > found.length ? `\n(${total - found.length} more matches not shown; narrow the pattern)` : '';
      const bounded = boundForModel(
        settings,
        [
          total === 0 ? `No files match ${args.pattern} in ${checked.display}.` : found.join('\n') + cut,
          ...describeSkipped(skipped),
        ].join('\n'),
      );
      return {
        content: bounded.text,
        meta: { path: checked.display, matches: total, skipped, ...bounded.meta },
      };
    },
  });
}
