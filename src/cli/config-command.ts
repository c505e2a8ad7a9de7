import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { ReinConfig } from '../internal.ts';
import {
  ConfigError,
  configKeyShape,
  describeUnknownConfigKeys,
  loadReinConfig,
  reinConfigPath,
  resolveReinHome,
  saveReinConfig,
  setProviderKey,
  suggestConfigKey,
  validateReinConfig,
} from '../internal.ts';
import { CliError, exitCodes, usageError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import { readAll } from './cli-io.ts';
import type { ParsedCommand } from './command-line.ts';
import { readHiddenLine } from './hidden-input.ts';

/** The subcommands of `rein config`, in the order its help lists them. */
export const configSubcommands = ['get', 'set', 'unset', 'set-key', 'path', 'edit'] as const;

/** `rein config get|set|unset|set-key|path|edit`: reads and changes `<home>/config.json`. */
export async function configCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ...rest] = parsed.positionals;
  const home = resolveReinHome(undefined, io.env);
  const path = reinConfigPath(home);
  switch (action) {
    case undefined:
      throw usageError('config', `missing subcommand: rein config ${configSubcommands.join('|')}`);
    case 'path':
      expectArguments('path', rest, 0);
      io.stdout.write(`${path}\n`);
      return exitCodes.ok;
    case 'get': {
      if (rest.length > 1) throw usageError('config', 'rein config get takes at most one key');
      const config = await loadReinConfig(home);
      const key = rest[0];
      const value = key === undefined ? config : valueAt(config, splitKey(key));
      if (value === undefined) {
        throw new CliError('CONFIG_KEY_NOT_SET', `${key ?? ''} is not set in ${path}`);
      }
      io.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(redact(value, key), null, 2)}\n`);
      return exitCodes.ok;
    }
    case 'set': {
      expectArguments('set', rest, 2);
      const keyPath = knownKey(rest[0]!);
      if (keyPath[0] === 'keys') {
        throw usageError('config', `keys are secrets: use rein config set-key ${keyPath[1] ?? '<provider>'}`);
      }
      const config = await loadReinConfig(home);
      const next = withValue(config, keyPath, parseValue(rest[1]!));
      await saveReinConfig(home, validateReinConfig(next, path));
      io.stderr.write(`set ${keyPath.join('.')} in ${path}\n`);
      return exitCodes.ok;
    }
    case 'unset': {
      expectArguments('unset', rest, 1);
      const keyPath = splitKey(rest[0]!);
      const config = await loadReinConfig(home);
      if (valueAt(config, keyPath) === undefined) {
        throw new CliError('CONFIG_KEY_NOT_SET', `${keyPath.join('.')} is not set in ${path}`);
      }
      await saveReinConfig(home, validateReinConfig(withValue(config, keyPath, undefined), path));
      io.stderr.write(`unset ${keyPath.join('.')} in ${path}\n`);
      return exitCodes.ok;
    }
    case 'set-key': {
      expectArguments('set-key', rest, 1);
      const provider = rest[0]!;
      const key = await readKey(io, provider);
      await setProviderKey(home, provider, key);
      io.stderr.write(
        `saved the ${provider} key in ${path} (mode 0600); an environment variable, when set, still wins\n`,
      );
      return exitCodes.ok;
    }
    case 'edit':
      expectArguments('edit', rest, 0);
      return editConfig(io, home, path);
    default:
      throw usageError('config', `unknown subcommand '${action}' (one of ${configSubcommands.join(', ')})`);
  }
}

function expectArguments(action: string, rest: readonly string[], count: number): void {
  if (rest.length === count) return;
  const shape: Record<string, string> = {
    path: 'rein config path',
    set: 'rein config set <key> <value>',
    unset: 'rein config unset <key>',
    'set-key': 'rein config set-key <provider>',
    edit: 'rein config edit',
  };
  throw usageError('config', `${rest.length < count ? 'missing' : 'too many'} arguments: ${shape[action]}`);
}

function splitKey(key: string): string[] {
  const parts = key.split('.');
  if (parts.some((part) => part === '')) {
    throw usageError('config', `'${key}' is not a key: write it like providers.ollama.baseUrl`);
  }
  if (parts[0] !== 'models' || parts.length <= 2) return parts;
  // Model ids contain dots (deepseek/deepseek-v3.2): the id is everything before the known fact at the end.
  for (const tail of [2, 1]) {
    const fact = parts.slice(-tail);
    if (parts.length - tail >= 2 && configKeyShape(['models', 'any', ...fact]) !== undefined) {
      return ['models', parts.slice(1, -tail).join('.'), ...fact];
    }
  }
  return ['models', parts.slice(1).join('.')];
}

/** A key Rein reads; a misspelled one is a usage error naming the nearest known key. */
function knownKey(key: string): string[] {
  const parts = splitKey(key);
  if (configKeyShape(parts) !== undefined) return parts;
  const suggestion = suggestConfigKey(parts);
  throw usageError(
    'config',
    `Rein reads no config key '${key}'${suggestion !== undefined ? ` (did you mean '${suggestion}'?)` : ''}; see docs/cli.md for the keys`,
  );
}

/** A value as written on the command line: JSON when it parses as JSON (numbers, true, objects), else a string. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Plain words (a model id, a URL) are strings; quoting them as JSON is not required.
    return text;
  }
}

function valueAt(config: unknown, path: readonly string[]): unknown {
  let node: unknown = config;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** A copy of `config` with the value at `path` replaced (or removed, for undefined); emptied sections go too. */
function withValue(config: ReinConfig, path: readonly string[], value: unknown): ReinConfig {
  const copy = structuredClone(config) as Record<string, unknown>;
  const parents: Record<string, unknown>[] = [copy];
  let node = copy;
  for (const part of path.slice(0, -1)) {
    const child = node[part];
    const next: Record<string, unknown> =
      typeof child === 'object' && child !== null && !Array.isArray(child)
        ? (child as Record<string, unknown>)
        : {};
    node[part] = next;
    node = next;
    parents.push(node);
  }
  const last = path.at(-1)!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  for (let index = parents.length - 1; index > 0; index--) {
    if (Object.keys(parents[index]!).length === 0) delete parents[index - 1]![path[index - 1]!];
  }
  return copy as ReinConfig;
}

/** The config as `get` prints it: saved keys replaced by a four-character hint, never printed whole. */
function redact(value: unknown, key: string | undefined): unknown {
  const hint = (secret: unknown): string =>
    typeof secret === 'string' ? `(saved, ends in …${secret.slice(-4)})` : '(saved)';
  if (key?.startsWith('keys.') === true) return hint(value);
  if (key === 'keys' && typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, secret]) => [name, hint(secret)]));
  }
  if (key === undefined && typeof value === 'object' && value !== null && 'keys' in value) {
    const config = value as ReinConfig;
    return { ...config, keys: redact(config.keys, 'keys') };
  }
  return value;
}

/** The key for `set-key`: a hidden prompt on a terminal, else the first line of standard input. */
async function readKey(io: CliIo, provider: string): Promise<string> {
  if (io.stdin.isTTY === true) {
    return readHiddenLine(io, `API key for ${provider} (input is hidden): `);
  }
  const text = (await readAll(io.stdin)).split(/\r?\n/, 1)[0] ?? '';
  if (text.trim() === '') {
    throw new ConfigError(
      'INVALID_CONFIG',
      `no key on standard input: pipe it in (rein config set-key ${provider} < key.txt) or run this on a terminal`,
    );
  }
  return text;
}

/** Opens the config file in `$VISUAL` / `$EDITOR` (vi), then checks what was saved and says what is wrong. */
async function editConfig(io: CliIo, home: string, path: string): Promise<number> {
  let existing: string | undefined;
  try {
    existing = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
  }
  // A missing file starts as an empty object, written with the home's permissions (0700 / 0600).
  if (existing === undefined) await saveReinConfig(home, {});
  const editor = io.env.VISUAL?.trim() || io.env.EDITOR?.trim() || 'vi';
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(`${editor} "$REIN_CONFIG_FILE"`, {
      shell: true,
      stdio: 'inherit',
      env: { ...io.env, REIN_CONFIG_FILE: path },
    });
    child.once('error', reject);
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal !== null ? 1 : 0)));
  });
  if (code !== 0) {
    throw new CliError(
      'EDITOR_FAILED',
      `the editor (${editor}) exited with code ${code}; ${path} is as it saved it`,
    );
  }
  try {
    const config = await loadReinConfig(home);
    for (const warning of describeUnknownConfigKeys(config, path))
      io.stderr.write(`rein: warning: ${warning}\n`);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr.write(`rein: error ${error.code}: ${error.message}\nRun rein config edit again to fix it.\n`);
    return exitCodes.error;
  }
  return exitCodes.ok;
}
