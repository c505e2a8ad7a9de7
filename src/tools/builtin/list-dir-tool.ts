import { closeSync, lstatSync, readdirSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { join } from 'node:path';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { boundForModel, pathArgument } from './builtin-settings.ts';
import { fileSystemFailure } from './file-access.ts';
import type { HeldDirectory } from './verified-open.ts';
import { heldLinkTarget, insideHeld, openVerified } from './verified-open.ts';
import type { Workspace } from './workspace.ts';

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
      const opened = openVerified(workspace, requested);
      const checked = opened.resolved;
      let names: string[];
      try {
        if (!opened.stat.isDirectory()) {
          throw new ToolError('NOT_A_DIRECTORY', `${requested} is not a directory; use read_file for files`);
        }
        const held = { fd: opened.fd, path: checked.real };
        let entries: Dirent[];
        try {
          entries = readdirSync(insideHeld(held, ''), { withFileTypes: true });
        } catch (error) {
          throw fileSystemFailure(error, requested);
        }
        names = entries.map((entry) => entryLabel(workspace, held, entry)).sort();
      } finally {
        closeSync(opened.fd);
      }
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

// Directories end with `/`, symlinks with `@` (and say when they lead outside), hard-linked files say so.
function entryLabel(workspace: Workspace, directory: HeldDirectory, entry: Dirent): string {
  if (entry.isDirectory()) return `${entry.name}/`;
  if (entry.isSymbolicLink()) {
    const target = heldLinkTarget(directory, entry.name);
    if (target === undefined) return `${entry.name}@`;
    let zone;
    try {
      zone = workspace.resolve(join(directory.path, entry.name)).zone;
    } catch {
      // Unresolvable (a loop): shown as a plain link.
      return `${entry.name}@`;
    }
    return zone === 'inside' || zone === 'git-internals'
      ? `${entry.name}@`
      : `${entry.name}@ (leads outside the workspace; not followed)`;
  }
  if (entry.isFile()) {
    try {
      const links = lstatSync(insideHeld(directory, entry.name)).nlink;
      if (links > 1) return `${entry.name} (${links} hard links; reading it asks first)`;
    } catch {
      // Removed since it was listed: shown by name.
    }
  }
  return entry.name;
}
