import type { ChildProcessByStdio, spawn as Spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync, statSync } from 'node:fs';
import { lazyModule } from '../../llm/lazy-module.ts';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { pathArgument } from './builtin-settings.ts';
import { OutputCollector } from './bounded-output.ts';
import { signalGroup, terminateGroup } from './process-group.ts';
import { sandboxArguments, sandboxStatus } from './sandbox.ts';

// Node's child_process (and the net and stream modules it loads) waits for the first command: a run
// that never calls `bash` does not pay for loading it.
const childProcess = lazyModule<{ spawn: typeof Spawn }>('node:child_process');

/** Arguments of `bash`. */
export interface BashArgs {
  command: string;
  timeout_ms?: number;
  cwd?: string;
  /** Sandboxed tool sets only: let this command reach the network (asks first in `sandbox` mode). */
  network?: boolean;
  /** Sandboxed tool sets only: run this command outside the sandbox (asks first in `sandbox` mode). */
  unsandboxed?: boolean;
}

/** Environment variable names that look like secrets: never passed on unless allowed by name. */
export const secretEnvironmentPattern = /KEY|SECRET|TOKEN|PASSWORD/i;

/** How long a terminated group gets to exit before SIGKILL. */
const terminationGraceMs = 2_000;

function namePattern(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*');
  return new RegExp(`^${escaped}$`);
}

/** The environment a command gets: the harness's own, minus secret-looking names not explicitly allowed. */
export function commandEnvironment(
  source: NodeJS.ProcessEnv,
  allowEnv: readonly string[],
): Record<string, string> {
  const allowed = allowEnv.map(namePattern);
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (secretEnvironmentPattern.test(name) && !allowed.some((pattern) => pattern.test(name))) continue;
    environment[name] = value;
  }
  return environment;
}

const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

/** `bash`: runs a command in its own process group, bounded in time and output. */
export function createBashTool(settings: BuiltinSettings): Tool<BashArgs> {
  const { workspace, sandbox } = settings;
  const sandboxed = (args: BashArgs | undefined): boolean =>
    sandbox !== undefined && args?.unsandboxed !== true;
  const sandboxProperties =
    sandbox === undefined
      ? {}
      : {
          network: {
            type: 'boolean',
            description: 'Let this command reach the network (the sandbox has none by default); asks first.',
          },
          unsandboxed: {
            type: 'boolean',
            description: 'Run this command outside the sandbox (full file system access); asks first.',
          },
        };
  return defineTool<BashArgs>({
    name: 'bash',
    description:
      'Run a shell command (bash -c) in the workspace and return its combined stdout and stderr with the ' +
      `exit code. Default timeout ${settings.bashTimeoutMs} ms, at most ${settings.bashMaxTimeoutMs} ms; on ` +
      'timeout the whole process group is killed. stdin is closed; background processes do not outlive the ' +
      'command. Long output keeps its head and tail and names a file with the full text.' +
      (sandbox === undefined
        ? ''
        : ' Commands run in a sandbox: only the workspace (and a private /tmp) is writable, credentials ' +
          'such as ~/.ssh are hidden, and there is no network unless network is true.'),
    effect: 'execute',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, description: 'The command line to run.' },
        timeout_ms: {
          type: 'integer',
          minimum: 1,
          maximum: settings.bashMaxTimeoutMs,
          description: 'Time limit in milliseconds.',
        },
        cwd: { type: 'string', description: 'Directory to run in (default: the workspace root).' },
        ...sandboxProperties,
      },
      required: ['command'],
      additionalProperties: false,
    },
    paths: (args) => pathArgument(args, 'cwd', '.'),
    command: (args) => (typeof args?.command === 'string' ? args.command : undefined),
    confinement: (args) => ({
      sandboxed: sandboxed(args),
      network: !sandboxed(args) || args?.network === true || sandbox?.network === true,
    }),
    async execute(args, context) {
      const directory = workspace.recheck(workspace.check(args.cwd ?? '.', 'read'), 'read');
      if (!existsSync(directory.real) || !statSync(directory.real).isDirectory()) {
        throw new ToolError('NOT_A_DIRECTORY', `${args.cwd ?? '.'} is not an existing directory`);
      }
      if (context.signal.aborted) throw new ToolError('ABORTED', 'the command was aborted before it started');
      const timeoutMs = args.timeout_ms ?? settings.bashTimeoutMs;
      const collector = new OutputCollector({
        directory: workspace.outputDirectory,
        limit: settings.outputLimit,
      });
      const started = Date.now();
      // One pipe for both streams keeps stdout and stderr in the order the command wrote them.
      const script = [shell, '-c', `exec 2>&1\n${args.command}`];
      let program = shell;
      let programArguments = script.slice(1);
      if (sandboxed(args)) {
        const status = sandboxStatus(sandbox?.bwrap);
        if (!status.available || status.bwrap === undefined) {
          throw new ToolError('SANDBOX_UNAVAILABLE', `the sandbox cannot run here: ${status.detail}`);
        }
        program = status.bwrap;
        programArguments = sandboxArguments({
          workspace: workspace.root,
          cwd: directory.real,
          reinHome: workspace.reinHome,
          network: args.network === true || sandbox?.network === true,
          hide: sandbox?.hide ?? [],
          command: script,
        });
      }
      let child: ChildProcessByStdio<null, Readable, null>;
      try {
        child = childProcess().spawn(program, programArguments, {
          cwd: directory.real,
          env: commandEnvironment(process.env, settings.allowEnv),
          detached: true,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
      } catch (error) {
        // Refused before a process exists: E2BIG for an over-long command, EAGAIN, ENOMEM…
        throw new ToolError('SPAWN_FAILED', `could not start ${program}: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const groupId = child.pid;
      let ending: 'timeout' | 'abort' | undefined;
      let termination: Promise<boolean> | undefined;
      const end = (why: 'timeout' | 'abort'): void => {
        if (ending !== undefined || groupId === undefined) return;
        ending = why;
        termination = terminateGroup(groupId, terminationGraceMs);
      };
      const timer = setTimeout(() => end('timeout'), timeoutMs);
      const onAbort = (): void => end('abort');
      context.signal.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (chunk: Buffer) => collector.push(chunk));
      // Background jobs would hold the pipes open; once the shell exits, the rest of its group goes too.
      child.on('exit', () => {
        if (groupId !== undefined) signalGroup(groupId, 'SIGKILL');
      });
      let exit: { code: number | null; signal: NodeJS.Signals | null };
      try {
        exit = await new Promise((resolve, reject) => {
          child.on('error', reject);
          child.on('close', (code, signal) => resolve({ code, signal }));
        });
      } catch (error) {
        throw new ToolError('SPAWN_FAILED', `could not start ${shell}: ${(error as Error).message}`, {
          cause: error,
        });
      } finally {
        clearTimeout(timer);
        context.signal.removeEventListener('abort', onAbort);
        if (termination !== undefined) await termination;
      }
      const output = collector.finish();
      const durationMs = Date.now() - started;
      const meta: Record<string, unknown> = {
        exitCode: exit.code,
        signal: exit.signal,
        durationMs,
        outputBytes: output.totalBytes,
        outputLines: output.totalLines,
        sandboxed: sandboxed(args),
      };
      if (output.spillPath !== undefined) meta['outputFile'] = output.spillPath;
      if (ending === 'abort')
        throw new ToolError('ABORTED', 'the command was aborted; its process group was killed');
      const text = output.text === '' ? '(no output)' : output.text;
      if (ending === 'timeout') {
        meta['timedOut'] = true;
        return {
          isError: true,
          content: `Error: the command timed out after ${timeoutMs} ms; its process group was killed.\n${text}`,
          meta,
        };
      }
      const status = exit.code !== null ? `exit code ${exit.code}` : `killed by ${exit.signal ?? 'a signal'}`;
      return { content: `${text}${text.endsWith('\n') ? '' : '\n'}[${status}]`, meta };
    },
  });
}
