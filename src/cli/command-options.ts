import { access, constants, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { PermissionMode } from '../index.ts';
import { parseModelRoute, permissionModes } from '../internal.ts';
import { CliError, usageError } from './cli-error.ts';

/** Checks `--approve`; a usage error for an unknown mode. */
export function approvalModeOption(
  command: string,
  value: string | boolean | undefined,
): PermissionMode | undefined {
  if (value === undefined) return undefined;
  const mode = permissionModes.find((candidate) => candidate === value);
  if (mode === undefined) {
    throw usageError(
      command,
      `'--approve' must be one of ${permissionModes.join(', ')}, not '${String(value)}'`,
    );
  }
  return mode;
}

/** Checks that `--model` is written provider/model; a usage error otherwise. */
export function checkModel(command: string, model: string): void {
  try {
    parseModelRoute(model);
  } catch {
    throw usageError(
      command,
      `'--model' must be written provider/model (e.g. deepseek/deepseek-chat), not '${model}'`,
    );
  }
}

/** Resolves `--cwd` against the process directory and checks it is a readable directory. */
export async function resolveWorkspace(base: string, option: string | undefined): Promise<string> {
  const path = resolve(base, option ?? '.');
  try {
    const info = await stat(path);
    if (!info.isDirectory()) throw new CliError('INVALID_CWD', `${path} is not a directory`);
    await access(path, constants.R_OK | constants.X_OK);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : 'it is not readable';
    throw new CliError('INVALID_CWD', `cannot work in ${path}: ${reason}`, { cause: error });
  }
  return path;
}
