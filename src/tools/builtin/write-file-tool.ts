import { createTwoFilesPatch } from 'diff';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { pathArgument } from './builtin-settings.ts';
import { existingFile, readTextFile, writeTextFile } from './file-access.ts';
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
  /** The text a write replaces, or undefined when it is binary or too large to diff. */
  const previousText = (checked: ReturnType<typeof workspace.check>): string | undefined => {
    try {
      return readTextFile(workspace, checked, maxDiffBytes).text;
    } catch (error) {
      // A binary or huge previous version is still replaced; only its diff is left out.
      if (!(error instanceof ToolError) || (error.code !== 'BINARY_FILE' && error.code !== 'FILE_TOO_LARGE'))
        throw error;
      return undefined;
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
    preview(args) {
      const checked = workspace.check(args.path, 'write');
      const existed = existingFile(workspace, checked);
      const before = existed ? previousText(checked) : '';
      if (before === undefined) return undefined;
      const diff = createTwoFilesPatch(checked.display, checked.display, before, args.content);
      return { path: checked.display, diff, created: !existed };
    },
    execute(args) {
      const checked = workspace.check(args.path, 'write');
      const existed = existingFile(workspace, checked);
      const before = existed ? previousText(checked) : undefined;
      const bytes = writeTextFile(workspace, checked, args.content);
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
