import { boundText } from './bounded-output.ts';
import type { OutputLimit } from './bounded-output.ts';
import { readTextFile, writeTextFile } from './file-access.ts';
import { ToolError } from '../tool-error.ts';
import type { ResolvedPath, Workspace } from './workspace.ts';

/** The call an editor file operation belongs to. */
export interface EditorFileContext {
  readonly sessionId: string;
  readonly signal: AbortSignal;
}

/**
 * An editor's view of text files (unsaved buffers included) that the file tools read and write through,
 * after the workspace check, with the canonical path. Each method answers `undefined` / `false` when the
 * editor does not serve that session, and the tool uses the disk instead.
 */
export interface EditorFiles {
  readTextFile(path: string, context: EditorFileContext): Promise<string | undefined>;
  writeTextFile(path: string, text: string, context: EditorFileContext): Promise<boolean>;
}

/** What every built-in tool of one set shares: the workspace, the output cap and the shell settings. */
export interface BuiltinSettings {
  readonly workspace: Workspace;
  readonly outputLimit: OutputLimit;
  /** Names (or `*` patterns) of secret-looking environment variables `bash` may still pass on. */
  readonly allowEnv: readonly string[];
  /** Default and maximum `bash` timeouts, in milliseconds. */
  readonly bashTimeoutMs: number;
  readonly bashMaxTimeoutMs: number;
  /** Files above this size are not read whole (edit_file, grep). */
  readonly maxFileBytes: number;
  /** The editor the file tools read and write through, when one serves the session. */
  readonly editorFiles?: EditorFiles;
}

/** Reads a checked text file through the editor when it serves the call's session, else from disk. */
export async function readCheckedText(
  settings: BuiltinSettings,
  checked: ResolvedPath,
  maxBytes: number,
  context: EditorFileContext,
): Promise<string> {
  const editor = settings.editorFiles;
  const text =
    editor === undefined
      ? undefined
      : await editor.readTextFile(settings.workspace.recheck(checked, 'read').real, context);
  if (text === undefined) return readTextFile(settings.workspace, checked, maxBytes).text;
  if (Buffer.byteLength(text) > maxBytes) {
    throw new ToolError(
      'FILE_TOO_LARGE',
      `${checked.requested} is over the ${maxBytes}-byte limit of this tool`,
    );
  }
  return text;
}

/** Writes a checked text file through the editor when it serves the call's session, else to disk; returns the bytes. */
export async function writeCheckedText(
  settings: BuiltinSettings,
  checked: ResolvedPath,
  content: string,
  context: EditorFileContext,
): Promise<number> {
  const editor = settings.editorFiles;
  if (
    editor !== undefined &&
    (await editor.writeTextFile(settings.workspace.recheck(checked, 'write').real, content, context))
  ) {
    return Buffer.byteLength(content);
  }
  return writeTextFile(settings.workspace, checked, content);
}

/** The `path` argument of a path tool, or `fallback` when absent or not a string (for policies). */
export function pathArgument(args: unknown, key = 'path', fallback?: string): string[] {
  const value =
    typeof args === 'object' && args !== null ? (args as Record<string, unknown>)[key] : undefined;
  if (typeof value === 'string') return [value];
  return fallback !== undefined ? [fallback] : [];
}

/** Bounds a finished result text to the output cap (spilling the whole text when cut). */
export function boundForModel(
  settings: BuiltinSettings,
  text: string,
): { text: string; meta: { outputFile?: string } } {
  const bounded = boundText(text, {
    directory: settings.workspace.outputDirectory,
    limit: settings.outputLimit,
  });
  return {
    text: bounded.text,
    meta: bounded.spillPath !== undefined ? { outputFile: bounded.spillPath } : {},
  };
}
