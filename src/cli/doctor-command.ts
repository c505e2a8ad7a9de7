import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import type { ReinHarness } from '../index.ts';
import {
  createReinHarness,
  describeProviders,
  loadReinConfig,
  reinConfigPath,
  resolveReinHome,
} from '../index.ts';
import { exitCodes } from './cli-error.ts';
import type { CliIo } from './cli-io.ts';
import type { ParsedCommand } from './command-line.ts';
import { mcpChecks } from './mcp-command.ts';

/** One finding of `rein doctor`. */
export interface DoctorCheck {
  /** What was checked, e.g. `node`, `home`, `provider deepseek`, `store`. */
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** What to do about a warning or failure. */
  fix?: string;
}

const minimumNode = [20, 19] as const;

/** `rein doctor`: checks the environment and says what to fix; exit 1 when something fails. */
export async function doctorCommand(parsed: ParsedCommand, io: CliIo): Promise<number> {
  const checks: DoctorCheck[] = [nodeCheck()];
  const home = resolveReinHome(undefined, io.env);
  checks.push(await homeCheck(home), ...(await providerChecks(home, io.env)));
  let harness: ReinHarness | undefined;
  try {
    harness = await createReinHarness({ cwd: io.cwd, env: io.env, home });
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'UNKNOWN';
    checks.push({
      name: 'setup',
      status: 'fail',
      detail: `Rein could not start here: ${code}: ${(error as Error).message}`,
      fix: 'fix the configuration named above, then run rein doctor again',
    });
  }
  if (harness !== undefined) {
    try {
      checks.push(modelCheck(harness), await storeCheck(harness), ...(await mcpChecks(harness)));
    } finally {
      await harness.dispose();
    }
  }
  if (parsed.values.json === true) {
    io.stdout.write(`${JSON.stringify({ home, checks }, null, 2)}\n`);
  } else {
    for (const check of checks) {
      const mark = check.status === 'ok' ? '✓' : check.status === 'warn' ? '!' : '✗';
      io.stdout.write(`${mark} ${check.name}: ${check.detail}\n`);
      if (check.fix !== undefined) io.stdout.write(`  → ${check.fix}\n`);
    }
    const failures = checks.filter((check) => check.status === 'fail').length;
    const warnings = checks.filter((check) => check.status === 'warn').length;
    io.stdout.write(
      failures > 0
        ? `\n${failures} problem${failures === 1 ? '' : 's'} to fix.\n`
        : `\nAll good${warnings > 0 ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}.\n`,
    );
  }
  return checks.some((check) => check.status === 'fail') ? exitCodes.error : exitCodes.ok;
}

function nodeCheck(): DoctorCheck {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > minimumNode[0] || (major === minimumNode[0] && minor >= minimumNode[1]);
  return ok
    ? { name: 'node', status: 'ok', detail: `Node ${process.versions.node}` }
    : {
        name: 'node',
        status: 'fail',
        detail: `Node ${process.versions.node} is too old`,
        fix: `install Node ${minimumNode[0]}.${minimumNode[1]} or newer`,
      };
}

async function homeCheck(home: string): Promise<DoctorCheck> {
  let info;
  try {
    info = await stat(home);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return {
        name: 'home',
        status: 'ok',
        detail: `${home} (not created yet; the first session creates it)`,
      };
    }
    return {
      name: 'home',
      status: 'fail',
      detail: `${home} cannot be read: ${(error as Error).message}`,
      fix: 'check the permissions of the directory or set REIN_HOME',
    };
  }
  if (!info.isDirectory()) {
    return {
      name: 'home',
      status: 'fail',
      detail: `${home} is not a directory`,
      fix: 'move the file away or set REIN_HOME to another directory',
    };
  }
  try {
    await access(home, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    return {
      name: 'home',
      status: 'fail',
      detail: `${home} is not writable`,
      fix: `chmod u+rwx ${home}, or set REIN_HOME`,
    };
  }
  const open = (info.mode & 0o077) !== 0;
  return open
    ? {
        name: 'home',
        status: 'warn',
        detail: `${home} is readable by other users (mode ${(info.mode & 0o777).toString(8)})`,
        fix: `chmod 700 ${home}`,
      }
    : { name: 'home', status: 'ok', detail: home };
}

async function providerChecks(home: string, env: CliIo['env']): Promise<DoctorCheck[]> {
  let config;
  try {
    config = await loadReinConfig(home);
  } catch (error) {
    return [
      {
        name: 'config',
        status: 'fail',
        detail: (error as Error).message,
        fix: `repair or remove ${reinConfigPath(home)}`,
      },
    ];
  }
  const checks: DoctorCheck[] = [];
  for (const entry of describeProviders({ env, config })) {
    const name = `provider ${entry.provider}`;
    const where =
      entry.baseUrlSource === 'default' ? '' : ` at ${entry.baseUrl} (from ${entry.baseUrlSource})`;
    switch (entry.keySource) {
      case 'env':
        checks.push({
          name,
          status: 'ok',
          detail: `key set in ${entry.keyVariable ?? 'the environment'}${where}`,
        });
        break;
      case 'config':
        checks.push({ name, status: 'ok', detail: `key saved in ${reinConfigPath(home)}${where}` });
        break;
      case 'not-required':
        checks.push({ name, status: 'ok', detail: `needs no key${where}` });
        break;
      case 'none':
        checks.push({
          name,
          status: 'warn',
          detail: `no key${where}`,
          fix: `set ${entry.keyVariable ?? 'its key variable'} to use ${entry.provider}`,
        });
        break;
    }
  }
  return checks;
}

function modelCheck(harness: ReinHarness): DoctorCheck {
  const route = `${harness.route.provider}/${harness.route.model}`;
  if (harness.usingDemo) {
    return {
      name: 'model',
      status: 'warn',
      detail: `${route} — the offline demo (scripted, not a real model), because no provider key is set`,
      fix: 'set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY to use a real model',
    };
  }
  return { name: 'model', status: 'ok', detail: `${route} by default` };
}

async function storeCheck(harness: ReinHarness): Promise<DoctorCheck> {
  let rows;
  try {
    rows = await harness.store.list();
  } catch (error) {
    return {
      name: 'store',
      status: 'fail',
      detail: `sessions cannot be listed: ${(error as Error).message}`,
      fix: 'check the permissions of the sessions directory',
    };
  }
  const broken: string[] = [];
  for (const row of rows) {
    if (row.corrupt !== undefined) {
      broken.push(`${row.id} (unreadable from line ${row.corrupt.line}, byte ${row.corrupt.offset})`);
      continue;
    }
    try {
      await harness.store.read(row.id);
    } catch (error) {
      broken.push(
        `${row.id} (${(error as { code?: string }).code ?? 'UNKNOWN'}: ${(error as Error).message})`,
      );
    }
  }
  if (broken.length > 0) {
    return {
      name: 'store',
      status: 'fail',
      detail: `${broken.length} of ${rows.length} sessions do not load: ${broken.join('; ')}`,
      fix: 'keep what is readable with rein fork --salvage <id> (a new session from the last good record), or remove them with rein rm <id>',
    };
  }
  return {
    name: 'store',
    status: 'ok',
    detail: `${rows.length} session${rows.length === 1 ? '' : 's'}, all load`,
  };
}
