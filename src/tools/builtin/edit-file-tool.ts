import type { createTwoFilesPatch as CreateTwoFilesPatch } from 'diff';
import { lazyModule } from '../../llm/lazy-module.ts';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { boundForModel, pathArgument, readCheckedText, writeCheckedText } from './builtin-settings.ts';
import { readTextFile } from './file-access.ts';

const diffModule = lazyModule<{ createTwoFilesPatch: typeof CreateTwoFilesPatch }>('diff');

/** Arguments of `edit_file`. */
export interface EditFileArgs {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** Diffs longer than this are summarized in the model's result (the whole diff stays in `meta`). */
const maxDiffInResult = 4000;

function occurrences(text: string, needle: string): number {
  let count = 0;
  let index = text.indexOf(needle);
  while (index !== -1) {
    count++;
    index = text.indexOf(needle, index + needle.length);
  }
  return count;
}

/** `edit_file`: exact string replacement that must match once (or everywhere with `replace_all`). */
export function createEditFileTool(settings: BuiltinSettings): Tool<EditFileArgs> {
  const { workspace } = settings;
  /** The text after an edit of `before`, and how many places matched; throws like the tool. */
  const apply = (args: EditFileArgs, display: string, before: string) => {
    const count = occurrences(before, args.old_string);
    if (count === 0) {
      throw new ToolError(
        'NO_MATCH',
        `old_string was not found in ${display}; read the file again and copy the exact text, whitespace included`,
      );
    }
    if (count > 1 && args.replace_all !== true) {
      throw new ToolError(
        'AMBIGUOUS_MATCH',
        `old_string matches ${count} places in ${display}; include more surrounding lines to make it unique, or set replace_all`,
      );
    }
    // split/join and slicing, never String.replace: `$&` and friends in new_string must stay literal.
    let after: string;
    if (args.replace_all === true) {
      after = before.split(args.old_string).join(args.new_string);
    } else {
      const index = before.indexOf(args.old_string);
      after = before.slice(0, index) + args.new_string + before.slice(index + args.old_string.length);
    }
    return { after, count };
  };
  const refuseNoChange = (args: EditFileArgs): void => {
    if (args.old_string === args.new_string) {
      throw new ToolError('NO_CHANGE', 'old_string and new_string are identical; nothing to change');
    }
  };
  return defineTool<EditFileArgs>({
    name: 'edit_file',
    description:
      'Replace an exact string in a text file. old_string must match the file exactly (whitespace and ' +
      'indentation included) and exactly once, unless replace_all is true. Read the file first. The result ' +
      'shows the change as a unified diff.',
    effect: 'write',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the workspace root or absolute.' },
        old_string: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
        new_string: { type: 'string', description: 'The text to put in its place.' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence instead of exactly one.' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    paths: (args) => pathArgument(args),
    edits: (args) => [{ path: args.path, oldText: args.old_string, newText: args.new_string }],
    preview(args) {
      refuseNoChange(args);
      // The write's access is checked first, so an edit outside the workspace is refused as a write.
      workspace.check(args.path, 'write');
      const read = readTextFile(workspace, args.path, settings.maxFileBytes);
      const checked = read.resolved;
      const { after } = apply(args, checked.display, read.text);
      return {
        path: checked.display,
        diff: diffModule().createTwoFilesPatch(checked.display, checked.display, read.text, after),
        created: false,
      };
    },
    async execute(args, context) {
      refuseNoChange(args);
      workspace.check(args.path, 'write');
      const read = await readCheckedText(settings, args.path, settings.maxFileBytes, context);
      const checked = read.resolved;
      const before = read.text;
      const { after, count } = apply(args, checked.display, before);
      await writeCheckedText(settings, args.path, after, context);
      const diff = diffModule().createTwoFilesPatch(checked.display, checked.display, before, after);
      const hunks = diff.split('\n').slice(2).join('\n');
      const shown =
        hunks.length <= maxDiffInResult
          ? hunks
          : `${hunks.slice(0, maxDiffInResult)}\n... (diff cut; ${hunks.length} characters in all)`;
      const bounded = boundForModel(
        settings,
        `Edited ${checked.display}: ${count} replacement${count === 1 ? '' : 's'}.\n${shown}`,
      );
      return {
        content: bounded.text,
        meta: { path: checked.display, replacements: count, diff, ...bounded.meta },
      };
    },
  });
}
