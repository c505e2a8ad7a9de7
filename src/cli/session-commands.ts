import { readFile, readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ReinHarness, SessionForkOptions, SessionSummary } from '../index.ts';
import {
  DiskSessionStore,
  compactSession,
  createReinHarness,
  parseModelRoute,
  reinWarningLine,
} from '../internal.ts';
import { CliError, exitCodes, usageError } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import type { ParsedCommand } from './command-line.ts';
import { positiveIntegerOption, stringOption } from './command-line.ts';
import { forkSpec } from './command-specs.ts';
import { checkModel, resolveWorkspace } from './command-options.ts';
import { latestSessionIn } from './run-command.ts';
import { resolveSessionId } from './session-id.ts';
import { renderTranscript } from './transcript.ts';

/**
 * Opens the app harness for a session command (its store, prices and plugins), prints what is wrong
 * with the config file on stderr, and disposes it after. Commands that need no model (`readOnly`) work
 * with a broken config file and say so.
 */
async function withHarness<T>(
  io: CliIo,
  task: (harness: ReinHarness) => Promise<T>,
  options: { model?: string; readOnly?: boolean } = {},
): Promise<T> {
  const harness = await createReinHarness({
    cwd: io.cwd,
    env: io.env,
    ...(options.model !== undefined ? { model: options.model } : {}),
    ...(options.readOnly === true ? { tolerateBrokenConfig: true } : {}),
  });
  for (const warning of harness.warnings) io.stderr.write(`rein: ${reinWarningLine(warning)}\n`);
  try {
    return await task(harness);
  } finally {
    await harness.dispose();
  }
}

/**
 * The session a command names: its positional id (the whole id or a unique prefix), or with `--last`
 * the most recently updated session of the current directory.
 */
async function sessionIdOf(command: string, parsed: ParsedCommand, harness: ReinHarness): Promise<string> {
  const id = parsed.positionals[0];
  if (parsed.values.last === true) {
    if (id !== undefined) throw usageError(command, `use either a session id or '--last', not both`);
    const latest = await latestSessionIn(harness, harness.cwd);
    if (latest === undefined) {
      throw new CliError('NO_SESSION', `no session in ${harness.cwd} yet; start one with: rein run "…"`);
    }
    return latest;
  }
  if (id === undefined || id === '') {
    throw usageError(command, `missing session id: rein ${command} <id> (or --last)`);
  }
  return resolveSessionId(harness.store, id);
}

/** `rein sessions`: the stored sessions as a table (or JSON). */
export async function sessionsCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const action = parsed.positionals[0];
  if (action === 'export') return exportSessions(parsed, io);
  if (action === 'import') return importSessions(parsed, io);
  if (action !== undefined) {
    throw usageError('sessions', `unknown sessions action '${action}' (expected export or import)`);
  }
  const filter = stringOption(parsed.values, 'cwd');
  const cwd = filter !== undefined ? await resolveWorkspace(io.cwd, filter) : undefined;
  const rows = await withHarness(io, async (harness) => harness.store.list(), { readOnly: true });
  const shown = (cwd !== undefined ? rows.filter((row) => row.cwd === cwd) : rows).sort(
    (a, b) => b.updatedAt - a.updatedAt,
  );
  if (parsed.values.json === true) {
    io.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
    return exitCodes.ok;
  }
  if (shown.length === 0) {
    io.stderr.write(
      `No sessions${cwd !== undefined ? ` in ${cwd}` : ''} yet. Start one with: rein run "…"\n`,
    );
    return exitCodes.ok;
  }
  io.stdout.write(renderTable(shown));
  return exitCodes.ok;
}

function renderTable(rows: readonly SessionSummary[]): string {
  const header = ['ID', 'TITLE', 'CWD', 'UPDATED', 'TURNS', 'COST'];
  const body = rows.map((row) => [
    row.id,
    clip(row.title ?? '(untitled)', 40),
    clip(tildify(row.cwd ?? '-'), 40),
    formatTime(row.updatedAt),
    String(row.turns),
    row.cost !== undefined ? `$${row.cost.toFixed(row.cost >= 1 ? 2 : 4)}` : '-',
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => cells[column]!.length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column >= 4 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...body.map(line)].join('\n')}\n`;
}

/** `rein show <id>`: a readable transcript, or the raw events as JSON lines. */
export async function showCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const { header, events } = await withHarness(
    io,
    async (harness) => harness.store.read(await sessionIdOf('show', parsed, harness)),
    { readOnly: true },
  );
  if (parsed.values.json === true) {
    for (const event of events) {
      io.stdout.write(
        `${JSON.stringify({ seq: event.seq, type: event.type, time: event.time, data: event.data })}\n`,
      );
    }
    return exitCodes.ok;
  }
  io.stdout.write(renderTranscript(header, events));
  return exitCodes.ok;
}

/** `rein fork <id> [--at <turn>]`: prints the new session's id. */
export async function forkCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const atTurn = positiveIntegerOption(forkSpec, parsed.values, 'at');
  const options: SessionForkOptions = {};
  if (atTurn !== undefined) options.atTurn = atTurn;
  if (parsed.values.salvage === true) options.salvage = true;
  let id = '';
  const header = await withHarness(
    io,
    async (harness) => {
      id = await sessionIdOf('fork', parsed, harness);
      return harness.store.fork(id, options);
    },
    { readOnly: true },
  );
  io.stdout.write(`${header.id}\n`);
  if (io.stderr.isTTY === true)
    io.stderr.write(`Forked ${id}. Continue it with: rein run --resume ${header.id} "…"\n`);
  return exitCodes.ok;
}

/** `rein compact <id>`: manual compaction of an idle stored session. */
export async function compactCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const model = stringOption(parsed.values, 'model');
  if (model !== undefined) checkModel('compact', model);
  return withHarness(
    io,
    async (harness) => {
      const id = await sessionIdOf('compact', parsed, harness);
      const route = model !== undefined ? parseModelRoute(model) : undefined;
      const agent = await harness.resumeAgent(
        id,
        route !== undefined ? { provider: route.provider, model: route.model } : {},
      );
      const result = await compactSession(harness, agent);
      if (!result.compacted) {
        io.stderr.write(`Nothing to compact in ${id}: the history already fits what is kept verbatim.\n`);
        return exitCodes.ok;
      }
      io.stdout.write(
        `Compacted ${id}: about ${result.shadowedTokenCount} tokens of history became a ${result.summaryTokenCount}-token summary.\n`,
      );
      return exitCodes.ok;
    },
    model !== undefined ? { model } : {},
  );
}

/** `rein rm <id>…`: deletes stored sessions; stops at the first that cannot be deleted. */
export async function rmCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  if (parsed.positionals.length === 0) throw usageError('rm', 'missing session id: rein rm <id> [<id> …]');
  return withHarness(
    io,
    async (harness) => {
      for (const text of parsed.positionals) {
        if (text === '')
          throw new CliError('USAGE', 'an empty session id', { exitCode: exitCodes.usage, usageOf: 'rm' });
        const id = await resolveSessionId(harness.store, text);
        await harness.store.delete(id);
        io.stdout.write(`removed ${id}\n`);
      }
      return exitCodes.ok;
    },
    { readOnly: true },
  );
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function tildify(path: string): string {
  const home = homedir();
  return path === home || path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

function formatTime(epochMs: number): string {
  const date = new Date(epochMs);
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** `rein sessions export`: copies stored logs, byte for byte, into a disk store directory. */
async function exportSessions(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const out = stringOption(parsed.values, 'out');
  if (out === undefined) throw usageError('sessions', "export needs '--out <dir>'");
  const ids = parsed.positionals.slice(1);
  const all = parsed.values.all === true;
  if (all === ids.length > 0) throw usageError('sessions', 'export takes session ids or --all (not both)');
  const target = new DiskSessionStore({ root: resolve(io.cwd, out) });
  return withHarness(io, async (harness) => {
    const store = harness.store;
    if (store.exportLog === undefined) {
      throw new CliError('SESSION_IO', 'this session store cannot export logs', {
        exitCode: exitCodes.error,
      });
    }
    const chosen = all ? (await store.list()).map((row) => row.id) : ids;
    for (const id of chosen) {
      const header = await target.importLog(await store.exportLog(id), `session ${id}`);
      io.stdout.write(`exported ${header.id} → ${target.pathOf(header.id)}\n`);
    }
    if (chosen.length === 0) io.stderr.write('No sessions to export.\n');
    return exitCodes.ok;
  });
}

/** `rein sessions import`: stores JSONL session logs (files, or every `*.jsonl` of a directory) unchanged. */
async function importSessions(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const sources = parsed.positionals.slice(1);
  if (sources.length === 0) throw usageError('sessions', 'import needs <file.jsonl | dir> …');
  const files: string[] = [];
  for (const source of sources) {
    const path = resolve(io.cwd, source);
    if ((await stat(path)).isDirectory()) {
      const names = (await readdir(path)).filter((name) => name.endsWith('.jsonl') && !name.startsWith('.'));
      files.push(...names.sort().map((name) => join(path, name)));
    } else {
      files.push(path);
    }
  }
  return withHarness(io, async (harness) => {
    const store = harness.store;
    if (store.importLog === undefined) {
      throw new CliError('SESSION_IO', 'this session store cannot import logs', {
        exitCode: exitCodes.error,
      });
    }
    for (const file of files) {
      const header = await store.importLog(await readFile(file, 'utf8'), file);
      io.stdout.write(`imported ${header.id} from ${file}\n`);
    }
    return exitCodes.ok;
  });
}
