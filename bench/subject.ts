// The contract every benchmarked loop (Rein, each peer, the bare floor) implements: one adapter file each.

/** How a subject may run the 16 parallel tool calls of W3. */
export type ParallelMode = 'unbounded' | 'pool-10' | 'pool-4' | 'sequential';

/** The bound each parallel mode stands for (unbounded: at least as many as the calls). */
export const parallelBound: Readonly<Record<ParallelMode, number>> = {
  unbounded: Number.POSITIVE_INFINITY,
  'pool-10': 10,
  'pool-4': 4,
  sequential: 1,
};

/** One tool call the fake model asks for; `arguments` is the raw JSON text. */
export interface FakeToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One fake-model reply: tool calls, or text streamed as the given deltas. */
export type FakeReply =
  { kind: 'tools'; calls: readonly FakeToolCall[] } | { kind: 'text'; deltas: readonly string[] };

/** The fake model's script: the reply to request number `call` (0-based); it never reads the prompt. */
export type FakeScript = (call: number) => FakeReply;

/** The single tool of a workload; concurrency-safe, arguments `{ index?: number }`. */
export interface BenchTool {
  readonly name: string;
  execute(args: { index?: number }, signal: AbortSignal | undefined): Promise<string> | string;
}

/** What a prompt run hands the fake model: the script and optional observation points. */
export interface PromptRun {
  script: FakeScript;
  tool: BenchTool;
  /** W3 only: how the subject schedules the tool calls (must be one of `parallelModes`). */
  parallel?: ParallelMode;
  /** Called for every text delta delivered to the subject's public subscriber. */
  onTextDelta?: () => void;
  /**
   * Called when request `call` reaches the fake model. `toolResults()` reads the request's tool results
   * (their text, in request order); only the W3 order probe calls it, so timed runs never read the prompt.
   */
  onRequest?: (call: number, toolResults: () => string[]) => void;
}

/** A long-lived conversation (W4): each `turn` sends one user message and resolves when the reply is done. */
export interface Conversation {
  turn(text: string): Promise<void>;
  close(): Promise<void>;
}

/** A benchmarked agent loop, driven only through its documented public API. */
export interface BenchSubject {
  readonly name: string;
  readonly version: string;
  /** The W3 modes this loop offers; the others are reported as not available. */
  readonly parallelModes: readonly ParallelMode[];
  /** Runs one prompt to completion against the fake model. */
  runPrompt(run: PromptRun): Promise<void>;
  /** Opens a conversation whose fake model plays `script` across all turns. */
  openConversation(script: FakeScript, tool: BenchTool): Promise<Conversation>;
}
