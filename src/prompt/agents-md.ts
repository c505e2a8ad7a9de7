import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Disposer, HookBus } from '../hooks/index.ts';
import type { UserMessage } from '../llm/index.ts';
import { HarnessError, createUserMessage } from '../llm/index.ts';
import type { Session } from '../session/index.ts';
import type { SystemPromptAssembler } from './system-prompt.ts';

// The events that carry messages (and so AGENTS.md injections).
const messageTypes: ReadonlySet<string> = new Set(['user/message', 'agent/inbox/spliced']);
/** The file name of agent instructions. */
export const agentsMdFileName = 'AGENTS.md';

/** The `origin` prefix of injected AGENTS.md messages; the file's workspace-relative path follows it. */
export const agentsMdOriginPrefix = 'agents-md:';

/** The most bytes of one AGENTS.md that reach the model. */
export const maxAgentsMdBytes = 64 * 1024;

/** What the AGENTS.md plugin needs of its host (a PluginHost provides it). */
export interface AgentsMdHost {
  readonly hooks: HookBus;
  readonly prompt: SystemPromptAssembler;
}

/** Options of `agentsMdPlugin`. */
export interface AgentsMdOptions {
  /** The workspace root: its AGENTS.md is a system-prompt section; those below it are injected. */
  workspace: string;
}

function isWithin(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function readInstructions(file: string): string | undefined {
  let text: string;
  try {
    if (!statSync(file).isFile()) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    // No readable AGENTS.md here: nothing to add.
    return undefined;
  }
  if (Buffer.byteLength(text) > maxAgentsMdBytes) {
    text = `${Buffer.from(text).subarray(0, maxAgentsMdBytes).toString('utf8')}\n[... ${agentsMdFileName} cut at ${maxAgentsMdBytes} bytes]`;
  }
  return text.trim() === '' ? undefined : text.trim();
}

/** The injected message carrying a subdirectory's AGENTS.md. */
export function agentsMdMessage(relativeFile: string, text: string): UserMessage {
  const directory = dirname(relativeFile);
  return createUserMessage(
    `Instructions from ${relativeFile} (they apply to files under ${directory}/):\n\n${text}`,
    { kind: 'inject', origin: `${agentsMdOriginPrefix}${relativeFile}` },
  );
}

// The name of the injections' scan in a session's saved scan states.
const agentsMdScan = 'agents-md/1';

/** The injections a snapshot saved, as of its end; undefined when there are none or they do not fit. */
function restoredInjections(session: Session): { scanned: number; injected: Set<string> } | undefined {
  const saved = session.scans.restored(agentsMdScan);
  const injected = (saved?.state as { injected?: unknown } | undefined)?.injected;
  if (saved === undefined || !Array.isArray(injected)) return undefined;
  if (!injected.every((path) => typeof path === 'string')) return undefined;
  return { scanned: saved.events, injected: new Set(injected as string[]) };
}

/**
 * AGENTS.md as context: the workspace root's file is a system-prompt section; the first time a tool
 * call succeeds on a path below a directory with its own AGENTS.md, that file's content rides the next
 * request as an injected message (source kind `inject`, origin `agents-md:<path>`), once per session.
 */
export function agentsMdPlugin(options: AgentsMdOptions): {
  name: string;
  setup(host: AgentsMdHost): Disposer;
} {
  let root: string;
  try {
    root = realpathSync(resolve(options.workspace));
  } catch (error) {
    throw new HarnessError('INVALID_OPTIONS', `the workspace ${options.workspace} does not exist`, {
      cause: error,
    });
  }
  const seen = new Map<string, { scanned: number; injected: Set<string> }>();

  // The files already injected into a session, read from its log (so a resumed session does not repeat them).
  const injectedIn = (session: Session): Set<string> => {
    let state = seen.get(session.id);
    if (state === undefined) {
      state = restoredInjections(session) ?? { scanned: 0, injected: new Set() };
      seen.set(session.id, state);
      session.scans.register(agentsMdScan, () => ({ injected: [...injectedIn(session)] }));
    }
    const log = session.log;
    const length = log.length;
    for (
      let seq = log.nextOfType(messageTypes, state.scanned);
      seq >= 0;
      seq = log.nextOfType(messageTypes, seq + 1)
    ) {
      const event = log.at(seq)!;
      const messages: unknown[] =
        event.type === 'user/message'
          ? [event.data]
          : event.type === 'agent/inbox/spliced'
            ? ((event.data as { inserted?: unknown[] }).inserted ?? [])
            : [];
      for (const message of messages) {
        const origin = (message as { source?: { kind?: string; origin?: unknown } }).source;
        if (
          origin?.kind === 'inject' &&
          typeof origin.origin === 'string' &&
          origin.origin.startsWith(agentsMdOriginPrefix)
        ) {
          state.injected.add(origin.origin.slice(agentsMdOriginPrefix.length));
        }
      }
    }
    state.scanned = length;
    return state.injected;
  };

  // The AGENTS.md files between the root (exclusive) and a touched path, outermost first.
  const filesFor = (requested: string): string[] => {
    let real: string;
    try {
      // Concatenated, not joined: the kernel, not a lexical fold, decides what `link/..` means.
      real = realpathSync(isAbsolute(requested) ? requested : `${root}${sep}${requested}`);
    } catch {
      // The path does not exist (any more): it touched no directory worth describing.
      return [];
    }
    if (!isWithin(root, real) || real === root) return [];
    let directory: string;
    try {
      directory = statSync(real).isDirectory() ? real : dirname(real);
    } catch {
      // Vanished between the two calls: nothing to add.
      return [];
    }
    const files: string[] = [];
    while (directory !== root && isWithin(root, directory)) {
      files.unshift(join(directory, agentsMdFileName));
      directory = dirname(directory);
    }
    return files;
  };

  // The root file is re-read only when its modification time or size changes (one stat per step).
  let cached: { key: string; text: string | undefined } | undefined;
  const rootInstructions = (): string | undefined => {
    const file = join(root, agentsMdFileName);
    let key: string;
    try {
      const stats = statSync(file);
      key = `${stats.mtimeMs}:${stats.size}:${stats.ino}`;
    } catch {
      // No root AGENTS.md (or it cannot be read): no section.
      cached = undefined;
      return undefined;
    }
    if (cached?.key !== key) cached = { key, text: readInstructions(file) };
    return cached.text;
  };

  return {
    name: 'agents-md',
    setup(host) {
      const disposers: Disposer[] = [
        host.prompt.addSection(() => {
          const text = rootInstructions();
          return text === undefined
            ? undefined
            : { id: 'agents-md', text: `# Project instructions (${agentsMdFileName})\n\n${text}`, order: 30 };
        }),
        host.hooks.on('tools/post-execute', async (payload, next) => {
          const decision = await next();
          if (payload.result.isError || decision.kind !== 'accept') return decision;
          let requested: string[] = [];
          try {
            requested = payload.call.tool?.paths?.(payload.call.args) ?? [];
          } catch {
            // A tool whose path declaration throws touched nothing we can name.
          }
          const injected = injectedIn(payload.session);
          const contexts: UserMessage[] = [];
          for (const path of requested) {
            for (const file of filesFor(path)) {
              const relativeFile = relative(root, file).split(sep).join('/');
              if (injected.has(relativeFile)) continue;
              const text = readInstructions(file);
              if (text === undefined) continue;
              injected.add(relativeFile);
              contexts.push(agentsMdMessage(relativeFile, text));
            }
          }
          if (contexts.length === 0) return decision;
          return { ...decision, additionalContexts: [...(decision.additionalContexts ?? []), ...contexts] };
        }),
        host.hooks.on('agent/disposed', ({ agent }) => {
          seen.delete(agent.id);
        }),
      ];
      return () => {
        for (const dispose of disposers.splice(0).reverse()) dispose();
        seen.clear();
      };
    },
  };
}
