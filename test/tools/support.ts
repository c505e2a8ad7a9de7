import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Tool, ToolContext, ToolOutput } from '../../src/index.ts';
import { MemorySessionStore, builtinTools } from '../../src/index.ts';

/** A temporary workspace, a sibling "outside" directory and a private Rein home, removed by `cleanup`. */
export interface Sandbox {
  /** Parent of everything below (canonical). */
  base: string;
  workspace: string;
  outside: string;
  reinHome: string;
  cleanup(): void;
}

/** Creates a sandbox with a workspace, an outside directory holding a secret, and a Rein home. */
export function sandbox(prefix = 'rein-tools-'): Sandbox {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const workspace = join(base, 'ws');
  const outside = join(base, 'outside');
  const reinHome = join(base, 'rein-home');
  for (const directory of [workspace, outside, reinHome]) mkdirSync(directory);
  return {
    base,
    workspace,
    outside,
    reinHome,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Writes files (path → content) below a directory, creating parents. */
export function writeFiles(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** The built-in tools of a sandbox, by name. */
export function toolsOf(
  box: Sandbox,
  options: Partial<Parameters<typeof builtinTools>[0]> = {},
): Record<string, Tool> {
  const tools = builtinTools({ workspace: box.workspace, reinHome: box.reinHome, ...options });
  return Object.fromEntries(tools.map((tool) => [tool.name, tool]));
}

/** A tool context over a real (in-memory) session. */
export async function toolContext(signal: AbortSignal = new AbortController().signal): Promise<ToolContext> {
  const session = await new MemorySessionStore().create({
    id: `tools-${Math.random().toString(36).slice(2)}`,
  });
  return {
    signal,
    callId: 'call_1',
    sessionId: session.id,
    turn: 1,
    step: 1,
    session,
    deferContext: () => undefined,
    concludeTurn: () => undefined,
  };
}

/** Runs a tool body directly (no pipeline): its output, or the error it threw. */
export async function run(
  tool: Tool | undefined,
  args: unknown,
  context?: ToolContext,
): Promise<{ output?: ToolOutput; error?: { code?: string; message: string } }> {
  if (tool === undefined) throw new Error('no such tool');
  try {
    return { output: await tool.execute(args as never, context ?? (await toolContext())) };
  } catch (error) {
    const failure = error as { code?: string; message: string };
    return {
      error: { ...(failure.code !== undefined ? { code: failure.code } : {}), message: failure.message },
    };
  }
}

/** The text of a tool output. */
export function textOf(output: ToolOutput | undefined): string {
  if (output === undefined) return '';
  if (typeof output === 'string') return output;
  const content = Array.isArray(output) ? output : output.content;
  if (typeof content === 'string') return content;
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** The meta of a tool output. */
export function metaOf<T = Record<string, unknown>>(output: ToolOutput | undefined): T {
  return (
    typeof output === 'object' && output !== null && !Array.isArray(output) ? output.meta : undefined
  ) as T;
}
