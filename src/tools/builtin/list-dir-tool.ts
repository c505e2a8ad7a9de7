import { readdirSync } from 'node:fs';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { boundForModel, pathArgument } from './builtin-settings.ts';
import { fileSystemFailure } from './file-access.ts';

/** Arguments of `list_dir`. */
export interface ListDirArgs {
  path?: string;
}

/** Entries shown before a listing is cut. */
export const maxListEntries = 1000;

/** `list_dir`: the entries of one directory, directories marked with `/` and symlinks with `@`. */
export function createListDirTool(settings: BuiltinSettings): Tool<ListDirArgs> {
  const { workspace } = settings;
  return defineTool<ListDirArgs>({
    name: 'list_dir',
    description:
      'List the entries of a directory (default: the workspace root), sorted by name. Directories end ' +
      `with "/", symbolic links with "@". At most ${maxListEntries} entries are shown.`,
    effect: 'read',
    category: 'search',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory path, relative to the workspace root or absolute.' },
      },
      additionalProperties: false,
    },
    paths: (args) => pathArgument(args, 'path', '.'),
    isConcurrencySafe: () => true,
    execute(args) {
      const requested = args.path ?? '.';
      const checked = workspace.recheck(workspace.check(requested, 'read'), 'read');
      let entries;
      try {
        entries = readdirSync(checked.real, { withFileTypes: true });
      } catch (error) {
        const failure = fileSystemFailure(error, requested);
        if (failure.code === 'NOT_A_DIRECTORY') {
          throw new ToolError('NOT_A_DIRECTORY', `${requested} is not a directory; use read_file for files`);
        }
        throw failure;
      }
      const names = entries
        .map((entry) =>
          entry.isDirectory() ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name,
        )
        .sort();
      const shown = names.slice(0, maxListEntries);
      const header = `${checked.display === '.' ? './' : `${checked.display}/`} (${names.length} entries)`;
      const cut =
        names.length > shown.length
          ? `\n(${names.length - shown.length} more entries not shown; use glob to narrow)`
          : '';
      const bounded = boundForModel(
        settings,
        names.length === 0 ? `${header}\n(empty directory)` : `${header}\n${shown.join('\n')}${cut}`,
      );
      return {
        content: bounded.text,
        meta: { path: checked.display, entries: names.length, ...bounded.meta },
      };
    },
  });
}
