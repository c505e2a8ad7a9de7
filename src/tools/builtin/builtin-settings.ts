import { closeSync } from 'node:fs';
import { boundText } from './bounded-output.ts';
import type { OutputLimit } from './bounded-output.ts';
import { readTextFile, writeTextFile } from './file-access.ts';
import { openVerified } from './verified-open.ts';
import { ToolError } from '../tool-error.ts';
import type { SandboxSettings } from './sandbox.ts';
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
  /** When set, `bash` runs inside the bubblewrap sandbox (see `sandboxArguments`). */
  readonly sandbox?: SandboxSettings;
  /** The editor the file tools read and write through, when one serves the session. */
  readonly editorFiles?: EditorFiles;
}

/**
 * Reads a text file through the editor when it serves the call's session (its buffer, unsaved changes
 * included), else from disk through the verified open; the path is checked against the workspace first.
 */
export async function readCheckedText(
  settings: BuiltinSettings,
  requested: string,
  maxBytes: number,
  context: EditorFileContext,
): Promise<{ text: string; resolved: ResolvedPath }> {
  const editor = settings.editorFiles;
  if (editor !== undefined) {
    const resolved = settings.workspace.check(requested, 'read');
    const text = await editor.readTextFile(resolved.real, context);
    if (text !== undefined) {
      if (Buffer.byteLength(text) > maxBytes) {
        throw new ToolError(
          'FILE_TOO_LARGE',
          `${resolved.display} is over the ${maxBytes}-byte limit of this tool`,
        );
      }
      return { text, resolved };
    }
  }
  const read = readTextFile(settings.workspace, requested, maxBytes);
  return { text: read.text, resolved: read.resolved };
}

/**
 * Writes a text file through the editor when it serves the call's session, else to disk through the
 * verified write (temporary file and rename); returns where it went, its bytes and whether it replaced
 * an existing file.
 */
export async function writeCheckedText(
  settings: BuiltinSettings,
  requested: string,
  content: string,
  context: EditorFileContext,
): Promise<{ resolved: ResolvedPath; bytes: number; replaced: boolean }> {
  const editor = settings.editorFiles;
  if (editor !== undefined) {
    const resolved = settings.workspace.check(requested, 'write');
    const replaced = existsVerified(settings.workspace, requested);
    if (await editor.writeTextFile(resolved.real, content, context)) {
      return { resolved, bytes: Buffer.byteLength(content), replaced };
    }
  }
  const outcome = writeTextFile(settings.workspace, requested, content);
  return { resolved: outcome.resolved, bytes: outcome.bytes, replaced: outcome.replaced };
}

function existsVerified(workspace: Workspace, requested: string): boolean {
  try {
    closeSync(openVerified(workspace, requested).fd);
    return true;
  } catch (error) {
    // Not there (or not openable): the editor's write creates it.
    if ((error as { code?: unknown }).code === 'FILE_NOT_FOUND') return false;
    throw error;
  }
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
