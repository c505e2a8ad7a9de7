import type { spawnSync as SpawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { lazyModule } from '../../llm/lazy-module.ts';
import { isWithin } from './workspace.ts';

// Loaded by the first probe, not at start-up (see bash-tool.ts).
const childProcess = lazyModule<{ spawnSync: typeof SpawnSync }>('node:child_process');

/** How `bash` is confined when its tool set is sandboxed. */
export interface SandboxSettings {
  /** Let sandboxed commands reach the network (every host); off by default. */
  readonly network?: boolean;
  /** More paths to hide inside the sandbox, besides the built-in credential list. */
  readonly hide?: readonly string[];
  /** The `bwrap` binary; `REIN_BWRAP`, else `bwrap` on `PATH`. */
  readonly bwrap?: string;
}

/** Whether the sandbox can be used here, probed once per `bwrap` path. */
export interface SandboxStatus {
  readonly available: boolean;
  /** The `bwrap` binary probed (undefined when none was found). */
  readonly bwrap?: string;
  /** One sentence: the version that works, or why it does not. */
  readonly detail: string;
}

/** Home-relative paths that hold credentials: hidden (empty) inside the sandbox. */
export const credentialPaths: readonly string[] = [
  '.ssh',
  '.aws',
  '.config',
  '.gnupg',
  '.netrc',
  '.docker',
  '.kube',
  '.azure',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.password-store',
  '.vault-token',
  '.terraform.d',
  '.local/share/keyrings',
  '.mozilla',
  '.bash_history',
  '.zsh_history',
];

/** Sockets of local daemons that would let a command act outside the sandbox. */
const daemonSockets: readonly string[] = ['/run/docker.sock', '/var/run/docker.sock', '/run/user'];

const probes = new Map<string, SandboxStatus>();

function onPath(name: string): string | undefined {
  for (const directory of (process.env['PATH'] ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}

// Where `bwrap` is on each PATH seen: every sandboxed call asks, and a search is a failing access() per
// directory before the right one (about 0.2 ms a call on a busy machine).
const bwrapOnPath = new Map<string, string>();

/** The `bwrap` binary to use: the setting, else `REIN_BWRAP`, else `bwrap` on `PATH`. */
export function bwrapBinary(setting?: string): string | undefined {
  const chosen = setting ?? process.env['REIN_BWRAP'];
  if (chosen !== undefined && chosen !== '') return chosen;
  const path = process.env['PATH'] ?? '';
  // Only a find is kept: bubblewrap installed while Rein runs is found on the next call.
  const found = bwrapOnPath.get(path) ?? onPath('bwrap');
  if (found !== undefined) bwrapOnPath.set(path, found);
  return found;
}

/**
 * Probes (once per binary, cached) whether `bwrap` exists and can create the namespaces the sandbox
 * needs (user, pid, network, mount), by running `true` inside exactly such a sandbox.
 */
export function sandboxStatus(setting?: string): SandboxStatus {
  const bwrap = bwrapBinary(setting);
  if (bwrap === undefined) {
    return {
      available: false,
      detail: 'bubblewrap (bwrap) is not installed; install the bubblewrap package',
    };
  }
  const cached = probes.get(bwrap);
  if (cached !== undefined) return cached;
  const shell = existsSync('/bin/sh') ? '/bin/sh' : '/bin/bash';
  const probe = childProcess().spawnSync(bwrap, [...baseArguments(false), '--', shell, '-c', 'exit 0'], {
    encoding: 'utf8',
    timeout: 10_000,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let status: SandboxStatus;
  if (probe.error !== undefined) {
    const code = (probe.error as NodeJS.ErrnoException).code;
    status = {
      available: false,
      bwrap,
      detail:
        code === 'ENOENT'
          ? `${bwrap} does not exist; install the bubblewrap package`
          : `${bwrap} could not be run: ${probe.error.message}`,
    };
  } else if (probe.status !== 0) {
    const reason = probe.stderr.trim().split('\n')[0] ?? '';
    status = {
      available: false,
      bwrap,
      detail: `${bwrap} cannot create the sandbox's namespaces here (${reason || `exit ${probe.status}`})`,
    };
  } else {
    const version = childProcess()
      .spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 5_000 })
      .stdout?.trim();
    status = {
      available: true,
      bwrap,
      detail: `${version || bwrap} creates user, pid, network and mount namespaces`,
    };
  }
  probes.set(bwrap, status);
  return status;
}

function baseArguments(network: boolean): string[] {
  return [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--unshare-all',
    ...(network ? ['--share-net'] : []),
    '--die-with-parent',
    '--cap-drop',
    'ALL',
  ];
}

// An empty directory over a directory, /dev/null over anything else; nothing for what does not exist.
// Looked up on every call (a credential directory may appear mid-session); a missing path returns
// undefined instead of throwing, which keeps the ~25 lookups of a call to microseconds.
function hideArguments(path: string): string[] {
  let stat;
  try {
    stat = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    // Not reachable (a file where a directory is expected, no permission): nothing there to hide.
    return [];
  }
  if (stat === undefined || stat.isSymbolicLink()) return [];
  return stat.isDirectory() ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path];
}

/** What one sandboxed command needs to know. */
export interface SandboxRequest {
  /** The canonical workspace root: the only writable place (besides a private `/tmp`). */
  readonly workspace: string;
  readonly cwd: string;
  /** Rein's home: hidden. */
  readonly reinHome: string;
  readonly network: boolean;
  readonly hide: readonly string[];
  /** The program and its arguments to run inside. */
  readonly command: readonly string[];
}

/**
 * The `bwrap` arguments of one sandboxed command: the whole file system read-only, the workspace
 * read-write (but `.git/hooks` and `.git/config`, which run code later outside, read-only), credential
 * paths and Rein's home hidden, a private `/tmp`, new user/pid/ipc/uts/cgroup/network namespaces (the
 * network shared only when allowed), every capability dropped, and death with the parent.
 */
export function sandboxArguments(request: SandboxRequest): string[] {
  const home = homedir();
  const hidden = [
    ...credentialPaths.map((path) => join(home, path)),
    ...daemonSockets,
    request.reinHome,
    ...request.hide,
  ];
  const outsideWorkspace = hidden.filter((path) => !isWithin(request.workspace, path));
  const insideWorkspace = hidden.filter((path) => isWithin(request.workspace, path));
  const gitGuards = ['.git/hooks', '.git/config']
    .map((path) => join(request.workspace, path))
    .filter((path) => existsSync(path))
    .flatMap((path) => ['--ro-bind', path, path]);
  return [
    ...baseArguments(request.network),
    ...outsideWorkspace.flatMap(hideArguments),
    '--bind',
    request.workspace,
    request.workspace,
    ...insideWorkspace.flatMap(hideArguments),
    ...gitGuards,
    '--setenv',
    'TMPDIR',
    '/tmp',
    '--chdir',
    request.cwd,
    '--',
    ...request.command,
  ];
}
