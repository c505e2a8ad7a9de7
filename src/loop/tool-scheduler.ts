import type { Inbox } from '../agent/index.ts';
import type { ToolCallBlock, UserMessage } from '../llm/index.ts';
import { createToolResultMessage } from '../llm/index.ts';
import type { Session } from '../session/index.ts';
import { appendBuilt, checkpointDone, toolCallData, toolResultData } from '../session/index.ts';
import type {
  PreparedCall,
  ToolCallInfo,
  ToolExecution,
  ToolExecutionResult,
  ToolPipeline,
  ToolRegistry,
  ToolSelection,
} from '../tools/index.ts';
import { abortedBeforeDispatchResult, toolErrorResult } from '../tools/index.ts';

interface StartedCall {
  readonly execution: ToolExecution;
  readonly callSeq: number;
  /** Resolves once the call is ready to commit (prepare done and, if dispatched, body settled). */
  readonly ready: Promise<void>;
  prepared: ToolExecutionResult | undefined;
  final: boolean;
  done: boolean;
  failure: unknown;
  readonly markReady: () => void;
}

/** What preparing and running one call came to: its result (or failure) and whether it is final. */
interface CallOutcome {
  readonly result: ToolExecutionResult | undefined;
  readonly final: boolean;
  readonly failure: unknown;
}

/** One assistant message's tool calls, with what the scheduler needs to run them. */
export interface ScheduleInput {
  readonly calls: readonly ToolCallBlock[];
  readonly session: Session;
  readonly inbox: Inbox;
  readonly turn: number;
  readonly step: number;
  readonly signal: AbortSignal;
  readonly selection: ToolSelection;
  readonly maxParallel: number;
}

/**
 * Runs one message's tool calls: exclusive calls as barriers, parallel calls in a bounded rolling pool,
 * each call reclassified just before it starts; preparation is serialized, bodies overlap, and
 * `tool/result`s commit strictly in model order. Returns true when a committed result concluded the turn.
 */
export class ToolScheduler {
  readonly #pipeline: ToolPipeline;
  readonly #registry: ToolRegistry;

  constructor(options: { pipeline: ToolPipeline; registry: ToolRegistry }) {
    this.#pipeline = options.pipeline;
    this.#registry = options.registry;
  }

  /** Runs every call of the message; every logged call gets exactly one result. */
  async run(input: ScheduleInput): Promise<boolean> {
    const run = new ScheduleRun(input, this.#pipeline, this.#registry);
    return run.execute();
  }
}

class ScheduleRun {
  readonly #input: ScheduleInput;
  readonly #pipeline: ToolPipeline;
  readonly #registry: ToolRegistry;
  readonly #started: StartedCall[] = [];
  // Made on the second call's description: a reply with one call (the common one) needs no map.
  #described: Map<ToolCallBlock, ReturnType<ToolPipeline['describe']>> | undefined;
  #onlyCall: ToolCallBlock | undefined;
  #onlyDescribed: ReturnType<ToolPipeline['describe']> | undefined;
  #committed = 0;
  #pumping: Promise<void> | undefined;
  #inFlight = 0;
  #slotWaiters: (() => void)[] = [];
  #concluded = false;
  #failure: unknown;

  constructor(input: ScheduleInput, pipeline: ToolPipeline, registry: ToolRegistry) {
    this.#input = input;
    this.#pipeline = pipeline;
    this.#registry = registry;
  }

  async execute(): Promise<boolean> {
    const { calls, signal } = this.#input;
    // One call (the common reply) needs no pool, no ready promises and no pump: it is started, run and
    // committed in line. Its log is the pool's for one call; only the classification is skipped, which
    // orders calls among each other and so decides nothing for a single one.
    if (calls.length === 1 && !signal.aborted) return this.#runOne(calls[0]!);
    let index = 0;
    try {
      while (index < calls.length && !signal.aborted && this.#failure === undefined) {
        if (!this.#isParallel(calls[index]!)) {
          await this.#start(calls[index]!);
          index++;
          await this.#drain();
          continue;
        }
        // A rolling pool over the following calls while each still classifies as parallel.
        const bound = this.#input.maxParallel;
        let first = true;
        while (index < calls.length && !signal.aborted && this.#failure === undefined) {
          while (this.#inFlight >= bound) await this.#slot();
          // Let settled results commit before the next call is logged.
          if (this.#pumping !== undefined) await this.#pumping;
          if (signal.aborted || this.#failure !== undefined) break;
          // Reclassified after the wait for a slot: a call that finished meanwhile may have changed it.
          if (!first && !this.#isParallel(calls[index]!)) break;
          first = false;
          await this.#start(calls[index]!);
          index++;
        }
        await this.#drain();
      }
      await this.#drain();
    } catch (error) {
      this.#failure ??= error;
      await this.#drainQuietly();
    }
    if (this.#failure !== undefined) {
      this.#closeOrphans();
      throw this.#failure;
    }
    for (; index < calls.length; index++) this.#syntheticPair(calls[index]!);
    return this.#concluded;
  }

  /** `execute` for exactly one call, with the same log and the same failure handling as the pool. */
  async #runOne(call: ToolCallBlock): Promise<boolean> {
    const { session, signal } = this.#input;
    const callEvent = this.#appendCall(call);
    const { call: info, problem } = this.#describe(call);
    const execution: ToolExecution = { call: info, session, signal, deferred: [], concludes: false };
    let outcome: CallOutcome;
    if (problem !== undefined) outcome = { result: problem, final: true, failure: undefined };
    else outcome = await this.#outcomeOf(execution, info);
    try {
      if (outcome.failure !== undefined) throw outcome.failure;
      const result = await this.#pipeline.finalize(execution, outcome.result!, outcome.final);
      this.#appendCommitted(execution, callEvent.seq, result);
    } catch (error) {
      // As the pool's `#closeOrphans`: the logged call still gets its one (honest, unknown) result.
      this.#appendOrphanResult(execution, callEvent.seq);
      throw error;
    }
    return this.#concluded;
  }

  /** Prepares a call and, when the pipeline dispatches it, runs its body (after a checkpoint if owed). */
  async #outcomeOf(execution: ToolExecution, info: ToolCallInfo): Promise<CallOutcome> {
    let prepared: PreparedCall;
    try {
      prepared = await this.#pipeline.prepare(execution);
    } catch (error) {
      return { result: undefined, final: true, failure: error };
    }
    if (prepared.kind !== 'dispatch')
      return { result: prepared.result, final: prepared.kind === 'final', failure: undefined };
    const session = execution.session;
    try {
      if (session.persistent && this.#mayHaveSideEffects(info)) {
        const durable = session.checkpoint('tool', execution.signal);
        // A checkpoint that stored (and synced) synchronously has nothing left to wait for.
        if (durable !== checkpointDone) await durable;
      }
      return { result: await this.#pipeline.dispatch(execution), final: false, failure: undefined };
    } catch (error) {
      return { result: undefined, final: true, failure: error };
    }
  }

  /** Reclassifies a call from its (once) validated arguments; invalid or unknown calls are exclusive. */
  #isParallel(call: ToolCallBlock): boolean {
    const { call: info, problem } = this.#describe(call);
    if (problem !== undefined || info.tool === undefined) return false;
    return this.#registry.classify(info.tool, info.args).kind === 'parallel';
  }

  /** False for a tool that declares itself read-only (`effect: 'read'`) or this call concurrency-safe. */
  #mayHaveSideEffects(info: ToolCallInfo): boolean {
    const tool = info.tool;
    if (tool === undefined) return true;
    return tool.effect !== 'read' && this.#registry.classify(tool, info.args).kind !== 'parallel';
  }

  // Arguments are parsed and validated once per call; classification and the pipeline share the result.
  #describe(call: ToolCallBlock): ReturnType<ToolPipeline['describe']> {
    if (call === this.#onlyCall) return this.#onlyDescribed!;
    let described = this.#described?.get(call);
    if (described === undefined) {
      const { session, turn, step, selection } = this.#input;
      described = this.#pipeline.describe(
        { callId: call.id, name: call.name, rawArguments: call.arguments, sessionId: session.id, turn, step },
        selection,
      );
      if (this.#onlyCall === undefined) {
        this.#onlyCall = call;
        this.#onlyDescribed = described;
      } else (this.#described ??= new Map()).set(call, described);
    }
    return described;
  }

  async #start(call: ToolCallBlock): Promise<void> {
    const { session, signal } = this.#input;
    const callEvent = this.#appendCall(call);
    const { call: info, problem } = this.#describe(call);
    const execution: ToolExecution = { call: info, session, signal, deferred: [], concludes: false };
    let markReady!: () => void;
    const record: StartedCall = {
      execution,
      callSeq: callEvent.seq,
      ready: new Promise<void>((resolve) => (markReady = resolve)),
      markReady,
      prepared: undefined,
      final: false,
      done: false,
      failure: undefined,
    };
    this.#started.push(record);
    if (problem !== undefined) {
      this.#settle(record, problem, true);
      return;
    }
    // Preparation (pre-execute, approval) is awaited here, so no two preparations overlap.
    let prepared: PreparedCall;
    try {
      prepared = await this.#pipeline.prepare(execution);
    } catch (error) {
      this.#settle(record, undefined, true, error);
      return;
    }
    if (prepared.kind !== 'dispatch') {
      this.#settle(record, prepared.result, prepared.kind === 'final');
      return;
    }
    try {
      // Only a body that can change the world waits for the log to be durable: a read-only or
      // concurrency-safe call repeats harmlessly if a crash loses its record.
      if (session.persistent && this.#mayHaveSideEffects(info)) await session.checkpoint('tool', signal);
    } catch (error) {
      this.#settle(record, undefined, true, error);
      return;
    }
    this.#inFlight++;
    this.#pipeline.dispatch(execution).then(
      (result) => {
        this.#release();
        this.#settle(record, result, false);
      },
      (error: unknown) => {
        this.#release();
        this.#settle(record, undefined, true, error);
      },
    );
  }

  #settle(
    record: StartedCall,
    result: ToolExecutionResult | undefined,
    final: boolean,
    failure?: unknown,
  ): void {
    record.prepared = result;
    record.final = final;
    record.failure = failure;
    record.done = true;
    record.markReady();
    void this.#pump();
  }

  #pump(): Promise<void> {
    if (this.#pumping !== undefined) return this.#pumping;
    // Cleared in `.finally` (always asynchronous), never inside the loop body, so a pump that finds
    // nothing to do cannot clear the field before it is assigned.
    const run: Promise<void> = this.#commitReady().finally(() => {
      if (this.#pumping === run) this.#pumping = undefined;
      const next = this.#started[this.#committed];
      if (next?.done === true && this.#failure === undefined) void this.#pump();
    });
    this.#pumping = run;
    return run;
  }

  async #commitReady(): Promise<void> {
    try {
      while (this.#committed < this.#started.length && this.#started[this.#committed]!.done) {
        await this.#commit(this.#started[this.#committed]!);
        this.#committed++;
      }
    } catch (error) {
      this.#failure ??= error;
    }
  }

  async #commit(record: StartedCall): Promise<void> {
    if (record.failure !== undefined) throw record.failure;
    const result = await this.#pipeline.finalize(record.execution, record.prepared!, record.final);
    this.#appendCommitted(record.execution, record.callSeq, result);
  }

  /** Logs a finalized result and applies what it carries: follow-up context, a concluded turn. */
  #appendCommitted(execution: ToolExecution, callSeq: number, result: ToolExecutionResult): void {
    this.#appendResult(execution, callSeq, result);
    for (const context of result.additionalContexts ?? [])
      this.#input.inbox.append('next-step', context as UserMessage);
    if (!result.isError && result.concludesTurn === true) this.#concluded = true;
  }

  #appendResult(execution: ToolExecution, callSeq: number, result: ToolExecutionResult): void {
    const { session, turn, step } = this.#input;
    const message = createToolResultMessage(execution.call.callId, result.content, result.isError);
    const options = { surfaceOp: 'append', sourceEventSeqs: Object.freeze([callSeq]), adopt: true } as const;
    const info = result.isError ? result.error.info : undefined;
    if (info === undefined && result.meta === undefined) {
      // The usual result (no error details, no meta) is committed as built.
      const built = toolResultData(turn, step, message);
      if (built !== undefined) {
        appendBuilt(session, 'tool/result', built, options);
        return;
      }
    }
    const data: {
      turn: number;
      step: number;
      message: ReturnType<typeof createToolResultMessage>;
      error?: { name: string; code: string };
      meta?: unknown;
    } = { turn, step, message };
    if (info !== undefined) data.error = { ...info };
    if (result.meta !== undefined) data.meta = result.meta;
    session.append('tool/result', data, options);
  }

  #appendCall(call: ToolCallBlock): { readonly seq: number } {
    const { session, turn, step } = this.#input;
    const built = toolCallData(turn, step, call);
    if (built !== undefined) return appendBuilt(session, 'tool/call', built);
    const data = { turn, step, callId: call.id, name: call.name, arguments: call.arguments };
    return session.append('tool/call', data, { adopt: true });
  }

  #syntheticPair(call: ToolCallBlock): void {
    const { session, turn, step } = this.#input;
    const callEvent = this.#appendCall(call);
    const result = abortedBeforeDispatchResult();
    session.append(
      'tool/result',
      {
        turn,
        step,
        message: createToolResultMessage(call.id, result.content, true),
        error: { name: 'AbortError', code: 'ABORTED_BEFORE_DISPATCH' },
      },
      { surfaceOp: 'append', sourceEventSeqs: [callEvent.seq], adopt: true },
    );
  }

  /** After an internal failure: give every logged call still without a result an honest error result. */
  #closeOrphans(): void {
    for (let position = this.#committed; position < this.#started.length; position++) {
      const record = this.#started[position]!;
      if (!this.#appendOrphanResult(record.execution, record.callSeq)) return;
    }
  }

  /** Logs the unknown-outcome result of a call the scheduler failed on; false when the log refuses it. */
  #appendOrphanResult(execution: ToolExecution, callSeq: number): boolean {
    const result = toolErrorResult(
      'the scheduler failed before this call was recorded; its outcome is unknown',
      {
        name: 'ToolOutcomeUnknownError',
        code: 'TOOL_OUTCOME_UNKNOWN',
      },
    );
    try {
      this.#appendResult(execution, callSeq, result);
      return true;
    } catch {
      // The log itself refuses writes (the failure we are reporting); crash repair closes these calls.
      return false;
    }
  }

  async #drain(): Promise<void> {
    // Each wait is skipped when there is nothing to wait for: a drained step costs no extra ticks.
    if (this.#started.some((record) => !record.done)) {
      await Promise.all(this.#started.map((record) => record.ready));
    }
    while (this.#pumping !== undefined) await this.#pumping;
    if (this.#committed < this.#started.length) await this.#pump();
    if (this.#failure !== undefined) throw this.#failure;
  }

  async #drainQuietly(): Promise<void> {
    await Promise.all(this.#started.map((record) => record.ready));
    while (this.#pumping !== undefined) await this.#pumping;
  }

  #slot(): Promise<void> {
    return new Promise<void>((resolve) => this.#slotWaiters.push(resolve));
  }

  #release(): void {
    this.#inFlight--;
    const waiter = this.#slotWaiters.shift();
    waiter?.();
  }
}
