import { createTwoFilesPatch } from 'diff';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { pathArgument, readCheckedText, writeCheckedText } from './builtin-settings.ts';
import { existingFile } from './file-access.ts';
import { ToolError } from '../tool-error.ts';

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
    async execute(args, context) {
      const checked = workspace.check(args.path, 'write');
      const existed = existingFile(workspace, checked);
      let before: string | undefined;
      if (existed) {
        try {
          before = await readCheckedText(settings, checked, maxDiffBytes, context);
        } catch (error) {
          // A binary or huge previous version is still replaced; only its diff is left out.
          if (
            !(error instanceof ToolError) ||
            (error.code !== 'BINARY_FILE' && error.code !== 'FILE_TOO_LARGE')
          )
            throw error;
        }
      }
      const bytes = await writeCheckedText(settings, checked, args.content, context);
      const lines =
        args.content === '' ? 0 : args.content.split('\n').length - (args.content.endsWith('\n') ? 1 : 0);
      const meta: { path: string; created: boolean; bytes: number; diff?: string } = {
        path: checked.display,
        created: !existed,
        bytes,
      };
      if (before !== undefined || !existed) {
        meta.diff = createTwoFilesPatch(checked.display, checked.display, before ?? '', args.content);
      }
      return {
        content: `${existed ? 'Overwrote' : 'Created'} ${checked.display} (${lines} lines, ${bytes} bytes).`,
        meta,
      };
    },
  });
}
