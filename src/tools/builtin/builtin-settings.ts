import { boundText } from './bounded-output.ts';
import type { OutputLimit } from './bounded-output.ts';
import type { SandboxSettings } from './sandbox.ts';
import type { Workspace } from './workspace.ts';

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
