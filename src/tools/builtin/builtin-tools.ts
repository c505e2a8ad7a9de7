import type { Tool } from '../tool.ts';
import { createBashTool } from './bash-tool.ts';
import type { BuiltinSettings, EditorFiles } from './builtin-settings.ts';
import type { OutputLimit } from './bounded-output.ts';
import type { SandboxSettings } from './sandbox.ts';
import { createEditFileTool } from './edit-file-tool.ts';
import { createGlobTool } from './glob-tool.ts';
import { createGrepTool } from './grep-tool.ts';
import { createListDirTool } from './list-dir-tool.ts';
import { createReadFileTool } from './read-file-tool.ts';
import { createWriteFileTool } from './write-file-tool.ts';
import { createTodoWriteTool } from './todo-write-tool.ts';
import { Workspace } from './workspace.ts';
import { HarnessError } from '../../llm/index.ts';

/** Options of `builtinTools`. */
export interface BuiltinToolsOptions {
  /** The directory the tools are confined to; it must exist. */
  workspace: string;
  /** Rein's home (protected; spilled output goes to its `tool-output/`); `REIN_HOME` or `~/.rein` by default. */
  reinHome?: string;
  /** The cap of each result's output (30 000 bytes by default). */
  outputLimit?: OutputLimit;
  /** Secret-looking environment variables `bash` may pass on anyway (names, `*` wildcards allowed). */
  allowEnv?: string[];
  /** Default `bash` timeout in ms (120 000). */
  bashTimeoutMs?: number;
  /** The longest `bash` timeout a call may ask for, in ms (600 000). */
  bashMaxTimeoutMs?: number;
  /** Files above this size are not read whole by edit_file and grep (10 MiB). */
  maxFileBytes?: number;
  /** Run `bash` inside the bubblewrap sandbox (`true` for the defaults: no network). */
  sandbox?: boolean | SandboxSettings;
  /** An editor the file tools read and write through for the sessions it serves. */
  editorFiles?: EditorFiles;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new HarnessError('INVALID_OPTIONS', `${name} must be a positive integer`);
  }
  return value;
}

/**
 * The built-in coding tools over one workspace: read_file, write_file, edit_file, list_dir, glob, grep,
 * bash and todo_write. Throws HarnessError `INVALID_OPTIONS` or ToolError `WORKSPACE_MISSING`.
 */
export function builtinTools(options: BuiltinToolsOptions): Tool[] {
  const bashMaxTimeoutMs = positive(options.bashMaxTimeoutMs, 600_000, 'bashMaxTimeoutMs');
  const settings: BuiltinSettings = {
    workspace: new Workspace({
      root: options.workspace,
      ...(options.reinHome !== undefined ? { reinHome: options.reinHome } : {}),
    }),
    outputLimit: { maxBytes: positive(options.outputLimit?.maxBytes, 30_000, 'outputLimit.maxBytes') },
    allowEnv: [...(options.allowEnv ?? [])],
    bashTimeoutMs: Math.min(positive(options.bashTimeoutMs, 120_000, 'bashTimeoutMs'), bashMaxTimeoutMs),
    bashMaxTimeoutMs,
    maxFileBytes: positive(options.maxFileBytes, 10 * 1024 * 1024, 'maxFileBytes'),
    ...(options.sandbox === true
      ? { sandbox: {} }
      : typeof options.sandbox === 'object'
        ? { sandbox: options.sandbox }
        : {}),
    ...(options.editorFiles !== undefined ? { editorFiles: options.editorFiles } : {}),
  };
  const tools: Tool<never>[] = [
    createReadFileTool(settings),
    createWriteFileTool(settings),
    createEditFileTool(settings),
    createListDirTool(settings),
    createGlobTool(settings),
    createGrepTool(settings),
    createBashTool(settings),
    createTodoWriteTool(settings),
  ] as Tool<never>[];
  return tools as Tool[];
}
