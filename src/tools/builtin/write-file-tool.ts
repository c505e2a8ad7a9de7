import type { createTwoFilesPatch as CreateTwoFilesPatch } from 'diff';
import { lazyModule } from '../../llm/lazy-module.ts';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { pathArgument, readCheckedText, writeCheckedText } from './builtin-settings.ts';
import { readTextFile } from './file-access.ts';
import { ToolError } from '../tool-error.ts';

const diffModule = lazyModule<{ createTwoFilesPatch: typeof CreateTwoFilesPatch }>('diff');

/** Arguments of `write_file`. */
export interface WriteFileArgs {
  path: string;
  content: string;
}

// Diffs of overwritten files are only computed up to this size (they are for the UI, not the model).
const maxDiffBytes = 1024 * 1024;

/** `write_file`: creates or overwrites a text file, creating missing parent directories. */
export function createWriteFileTool(settings: BuiltinSettings): Tool<WriteFileArgs> {
  const { workspace } = settings;
  /**
   * What a write would replace: whether the file exists, and its text (undefined when it is binary or
   * too large to diff); read through the same verified open as every file tool.
   */
  const previous = (path: string): { existed: boolean; before: string | undefined } => {
    try {
      return { existed: true, before: readTextFile(workspace, path, maxDiffBytes).text };
    } catch (error) {
      // A missing file is created; a binary or huge previous version is still replaced, without a diff.
      if (!(error instanceof ToolError)) throw error;
      if (error.code === 'FILE_NOT_FOUND') return { existed: false, before: undefined };
      if (error.code !== 'BINARY_FILE' && error.code !== 'FILE_TOO_LARGE') throw error;
      return { existed: true, before: undefined };
    }
  };
  return defineTool<WriteFileArgs>({
    name: 'write_file',
    description:
      'Create a file or overwrite it entirely with the given content; missing parent directories are ' +
      'created. Prefer edit_file for changing part of an existing file.',
    effect: 'write',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the workspace root or absolute.' },
        content: { type: 'string', description: 'The complete new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    paths: (args) => pathArgument(args),
    edits: (args) => [{ path: args.path, newText: args.content }],
    preview(args) {
      const checked = workspace.check(args.path, 'write');
      const { existed, before: text } = previous(args.path);
      const before = existed ? text : '';
      if (before === undefined) return undefined;
      const diff = diffModule().createTwoFilesPatch(checked.display, checked.display, before, args.content);
      return { path: checked.display, diff, created: !existed };
    },
    async execute(args, context) {
      workspace.check(args.path, 'write');
      let before: string | undefined;
      try {
        before = (await readCheckedText(settings, args.path, maxDiffBytes, context)).text;
      } catch (error) {
        // A missing file is created; a binary or huge previous version is still replaced, without a diff.
        if (!(error instanceof ToolError)) throw error;
        if (
          error.code !== 'FILE_NOT_FOUND' &&
          error.code !== 'BINARY_FILE' &&
          error.code !== 'FILE_TOO_LARGE'
        )
          throw error;
      }
      const outcome = await writeCheckedText(settings, args.path, args.content, context);
      const checked = outcome.resolved;
      const bytes = outcome.bytes;
      const existed = outcome.replaced;
      const lines =
        args.content === '' ? 0 : args.content.split('\n').length - (args.content.endsWith('\n') ? 1 : 0);
      const meta: { path: string; created: boolean; bytes: number; diff?: string } = {
        path: checked.display,
        created: !existed,
        bytes,
      };
      if (before !== undefined || !existed) {
        meta.diff = diffModule().createTwoFilesPatch(
          checked.display,
          checked.display,
          before ?? '',
          args.content,
        );
      }
      return {
        content: `${existed ? 'Overwrote' : 'Created'} ${checked.display} (${lines} lines, ${bytes} bytes).`,
        meta,
      };
    },
  });
}
