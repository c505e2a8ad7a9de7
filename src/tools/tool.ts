import type { ContentBlock, JsonSchema, UserMessage } from '../llm/index.ts';
import type { Session } from '../session/index.ts';

/** Whether a call may overlap with its siblings or must run alone as an ordering barrier. */
export type ToolExecutionMode = { kind: 'parallel' } | { kind: 'exclusive' };

/** A zod-like schema: anything with `safeParse` (zod v4 schemas qualify). */
export interface ZodLikeSchema {
  safeParse(
    value: unknown,
  ): { success: true; data: unknown } | { success: false; error: { issues: readonly ZodLikeIssue[] } };
}

/** One validation issue of a zod-like schema. */
export interface ZodLikeIssue {
  path: readonly PropertyKey[];
  message: string;
}

/** What a tool receives besides its arguments. */
export interface ToolContext {
  /**
   * Aborted when the turn is cancelled; every tool must honour it. It is the turn's signal, shared by
   * every call of the turn, so a listener a call adds to it must be removed when the call ends.
   */
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly sessionId: string;
  readonly turn: number;
  readonly step: number;
  /** The session this call belongs to (read it; the scheduler owns its tool records). */
  readonly session: Session;
  /** Queues context that rides the next request (spliced into `next-step` after this call's result). */
  deferContext(message: UserMessage | string): void;
  /** Marks the turn as concluded by this call once its result commits. */
  concludeTurn(): void;
  /** Reports how far the call has got (recorded as `tool/progress`, announced on `tools/progress`). */
  reportProgress?(progress: ToolProgress): void;
}

/** One progress report of a running call: `progress` of `total` (when known), with an optional message. */
export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** What a tool body may return: text, blocks, or a structured result. */
export type ToolOutput =
  | string
  | ContentBlock[]
  | {
      content: string | ContentBlock[];
      meta?: unknown;
      isError?: boolean;
      /** With `isError`: the code the error result carries, for UIs and plugins to route on. */
      errorCode?: string;
      concludesTurn?: boolean;
    };

/** What a call does to the world; policies (permissions, repetition guard) read it, never the tool's name. */
export type ToolEffect = 'read' | 'write' | 'execute' | 'other';

/** How the OS confines one call, declared by tools that can run inside a sandbox. */
export interface ToolConfinement {
  /** True when the call runs inside an OS sandbox that confines it to the workspace. */
  readonly sandboxed: boolean;
  /** True when the call may reach the network. */
  readonly network: boolean;
}

/** How front ends group a tool's calls (an editor's tool kinds); derived from `effect` when omitted. */
export type ToolCategory = 'read' | 'edit' | 'search' | 'execute' | 'fetch' | 'think' | 'other';

/** A file change a call proposes (a fragment or the whole new text), for front ends that show it. */
export interface ToolEdit {
  readonly path: string;
  /** The text replaced; omitted when the call writes the whole file. */
  readonly oldText?: string;
  readonly newText: string;
}

/** A tool definition. */
export interface Tool<Args = unknown> {
  readonly name: string;
  readonly description: string;
  /** What calls of this tool do; omitted means `other` (treated as mutating by policies). */
  readonly effect?: ToolEffect;
  /** How front ends group its calls; omitted means derived from `effect`. */
  readonly category?: ToolCategory;
  /** The file changes a call proposes, shown to a human before and after it runs. */
  edits?(args: Args): ToolEdit[];
  /** True for polling/status tools whose repeated identical calls are expected. */
  readonly polling?: boolean;
  /** The filesystem paths a call touches, for path-aware policies. */
  paths?(args: Args): string[];
  /** The shell command a call runs, for command-aware policies. */
  command?(args: Args): string | undefined;
  /** How a call would be confined by the OS, for policies that let sandboxed calls run unasked. */
  confinement?(args: Args): ToolConfinement;
  /**
   * JSON Schema of the arguments, or a zod schema (converted to JSON Schema for the model). Omitted: a
   * raw tool, which receives whatever the model sent (parsed JSON, or the raw string when it is not JSON).
   */
  readonly parameters?: JsonSchema | ZodLikeSchema;
  /** Return literally `true` to let this call run in parallel; anything else means exclusive. */
  isConcurrencySafe?(args: Args): unknown;
  /**
   * What a call would change, computed without side effects, so an approver can show it before the
   * decision; undefined (or a throw) when there is nothing to show.
   */
  preview?(args: Args): ToolPreview | undefined;
  /** Runs the call; throw to fail it (the model reads the error). */
  execute(args: Args, context: ToolContext): Promise<ToolOutput> | ToolOutput;
}

/** A file change a call would make: a unified diff (a new file diffs against empty). */
export interface ToolPreview {
  readonly path: string;
  readonly diff: string;
  /** True when the file does not exist yet. */
  readonly created: boolean;
}

/** Defines a tool with typed arguments. */
export function defineTool<Args>(tool: Tool<Args>): Tool<Args> {
  return tool;
}
