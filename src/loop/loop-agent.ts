import type {
  Agent,
  AgentCancelCause,
  AgentOptions,
  AgentServices,
  AgentStatus,
  InboxTarget,
  MessageInput,
  PreStepDecision,
} from '../agent/index.ts';
import { Inbox } from '../agent/index.ts';
import type { LlmFailure, MessageSource, UserMessage } from '../llm/index.ts';
import {
  HarnessError,
  LlmError,
  createUserMessage,
  snapshotJson,
  toFailure,
  userMessageSource,
} from '../llm/index.ts';
import type { Session, TurnEndReason } from '../session/index.ts';
import { appendBuilt, stepData } from '../session/index.ts';
import type { PromptSection } from '../prompt/index.ts';
import { AgentAbortedError, isCancelCause, throwIfAborted } from './agent-aborted-error.ts';
import { StepRunner } from './step-runner.ts';
import { ToolScheduler } from './tool-scheduler.ts';

type Phase =
  | { kind: 'idle' }
  | { kind: 'maintenance'; controller: AbortController; latch: boolean }
  | { kind: 'running'; controller: AbortController; turn: number; step: number; latch: boolean };

// Children of each live agent, so that cancelling a parent reaches them with `{ kind: 'parent' }`.
const childrenOf = new WeakMap<Agent, Set<Agent>>();

/**
 * The default driver: drains the inbox into turns and steps exactly as the seed describes — turn/start
 * before the claim, agent/pre-step enter/reject, request and stream, tools, agent/turn-stopping, turn/end.
 */
export class LoopAgent implements Agent {
  readonly id: string;
  readonly session: Session;
  readonly inbox: Inbox;
  readonly options: Readonly<AgentOptions>;
  readonly #services: AgentServices;
  readonly #steps: StepRunner;
  #phase: Phase = { kind: 'idle' };
  #status: AgentStatus = 'idle';
  #lastTurn: number;
  #activity: Promise<unknown> | undefined;
  #disposing: Promise<void> | undefined;
  // The sections the last system prompt was rendered from (copies) and that prompt.
  #lastSections: readonly PromptSection[] | undefined;
  #lastSystem = '';

  constructor(services: AgentServices, session: Session, options: AgentOptions) {
    this.#services = services;
    this.session = session;
    this.id = session.id;
    this.options = Object.freeze({ ...options, id: session.id });
    this.inbox = new Inbox({ session, hooks: services.hooks });
    this.inbox.bindOwner(this);
    this.#lastTurn = session.lastTurn;
    const scheduler = new ToolScheduler({ pipeline: services.pipeline, registry: services.tools });
    this.#steps = new StepRunner({
      agent: this,
      session,
      inbox: this.inbox,
      hooks: services.hooks,
      llm: services.llm,
      tools: services.tools,
      scheduler,
      maxParallel: options.maxParallelToolCalls ?? services.maxParallelToolCalls,
    });
    if (options.parent !== undefined) {
      let children = childrenOf.get(options.parent);
      if (children === undefined) {
        children = new Set();
        childrenOf.set(options.parent, children);
      }
      children.add(this);
    }
  }

  get status(): AgentStatus {
    return this.#status;
  }

  get disposed(): boolean {
    return this.#disposing !== undefined;
  }

  send(input: MessageInput, target: InboxTarget, wakeup: boolean): UserMessage {
    if (this.#disposing !== undefined)
      throw new HarnessError('AGENT_DISPOSED', `agent ${this.id} is disposed`);
    if (target !== 'next-turn' && target !== 'next-step') {
      throw new HarnessError('INVALID_INBOX_OPERATION', `unknown inbox target '${String(target)}'`);
    }
    const message = toUserMessage(input, defaultSource(target, wakeup));
    const phase = this.#phase;
    const wakingAfterAbort = wakeup && phase.kind !== 'idle' && phase.controller.signal.aborted;
    // A steer sent while an aborted activity converges becomes a next-turn prompt.
    this.inbox.append(wakingAfterAbort ? 'next-turn' : target, message);
    if (wakeup) this.#wake(wakingAfterAbort);
    return message;
  }

  followup(message: MessageInput): UserMessage {
    return this.send(message, 'next-turn', true);
  }

  steer(message: MessageInput): UserMessage {
    return this.send(message, 'next-step', true);
  }

  inject(message: MessageInput): UserMessage {
    return this.send(message, 'next-step', false);
  }

  cancel(cause: AgentCancelCause, options: { keepInbox?: boolean } = {}): void {
    if (!isCancelCause(cause))
      throw new HarnessError('INVALID_CANCEL_CAUSE', 'cancel needs an AgentCancelCause');
    const phase = this.#phase;
    if (options.keepInbox !== true) {
      this.inbox.clear();
      if (phase.kind !== 'idle') phase.latch = false;
    }
    if (phase.kind !== 'idle' && !phase.controller.signal.aborted) {
      // Durable before the abort, so it lands ahead of the turn/end it explains; the first cause wins.
      this.session.append('agent/cancelled', { cause: snapshotJson(cause) });
      phase.controller.abort(cause);
    }
    for (const child of childrenOf.get(this) ?? []) {
      if (!child.disposed) child.cancel({ kind: 'parent' }, options);
    }
  }

  async whenIdle(): Promise<void> {
    while (this.#phase.kind !== 'idle' && this.#activity !== undefined) {
      await this.#activity;
    }
  }

  runMaintenance<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.#disposing !== undefined)
      throw new HarnessError('AGENT_DISPOSED', `agent ${this.id} is disposed`);
    if (this.#phase.kind !== 'idle') throw new HarnessError('AGENT_BUSY', `agent ${this.id} is not idle`);
    const phase: Phase = { kind: 'maintenance', controller: new AbortController(), latch: false };
    this.#phase = phase;
    let result: Promise<T>;
    try {
      result = Promise.resolve(task(phase.controller.signal));
    } catch (error) {
      result = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const settled = result.then(
      () => this.#finishActivity(phase),
      () => this.#finishActivity(phase),
    );
    this.#activity = settled;
    return result;
  }

  dispose(): Promise<void> {
    this.#disposing ??= (async () => {
      this.cancel({ kind: 'disposed' });
      await this.whenIdle();
      this.#services.hooks.disposeScope(this.id);
      this.#services.registry.remove(this);
      if (this.options.parent !== undefined) childrenOf.get(this.options.parent)?.delete(this);
      await this.#services.store.release(this.session);
    })();
    return this.#disposing;
  }

  #wake(afterAbort: boolean): void {
    const phase = this.#phase;
    switch (phase.kind) {
      case 'idle':
        this.#startDrain();
        return;
      case 'maintenance':
        if (!isDisposedAbort(phase.controller.signal)) phase.latch = true;
        return;
      case 'running':
        if (afterAbort && !isDisposedAbort(phase.controller.signal)) phase.latch = true;
        return;
    }
  }

  #startDrain(): void {
    const phase: Phase = {
      kind: 'running',
      controller: new AbortController(),
      turn: this.#lastTurn,
      step: 0,
      latch: false,
    };
    this.#phase = phase;
    this.#setStatus('running');
    // The drain runs synchronously until its first await: turn/start and the claim happen inside this call.
    this.#activity = this.#drain(phase);
  }

  async #drain(phase: Phase & { kind: 'running' }): Promise<void> {
    try {
      while (await this.#turn(phase)) {
        // Each iteration is one turn; `#turn` decides whether the drain goes on.
      }
    } catch {
      // Failures were already reported (agent/error) or are cancellations; the drain just ends.
    } finally {
      this.#lastTurn = phase.turn;
      this.#finishActivity(phase);
    }
  }

  #finishActivity(phase: Phase & { kind: 'running' | 'maintenance' }): void {
    if (this.#phase !== phase) return;
    this.#phase = { kind: 'idle' };
    this.#setStatus('idle');
    if (phase.latch && this.inbox.size() > 0 && this.#disposing === undefined) this.#startDrain();
  }

  /** One turn; resolves true when the drain should run another turn in the same running interval. */
  async #turn(phase: Phase & { kind: 'running' }): Promise<boolean> {
    const signal = phase.controller.signal;
    throwIfAborted(signal);
    const turn = phase.turn + 1;
    try {
      this.session.append('turn/start', { turn }, adopted);
    } catch (error) {
      this.#reportError(turn, 0, error);
      throw error;
    }
    phase.turn = turn;
    phase.step = 0;
    const state: TurnState = {
      phase,
      turn,
      signal,
      outcome: undefined,
      target: 'next-turn',
      failures: [],
      maxTokens: false,
    };
    let leftNormally = false;
    try {
      // This frame lives as long as the turn (thousands of steps): it stays thin, and each step's work
      // runs in its own call, which the engine can optimize again after a deoptimization.
      let verdict: StepVerdict;
      do verdict = await this.#step(state);
      while (verdict === 'again');
      leftNormally = verdict === 'leave';
    } catch (error) {
      if (signal.aborted) {
        state.outcome = { kind: 'aborted' };
        throw error instanceof AgentAbortedError ? error : new AgentAbortedError(signal.reason);
      }
      state.outcome = { kind: 'error', error: toFailure(error) };
      this.#reportError(turn, phase.step, error);
      throw error;
    } finally {
      this.#closeTurn(turn, reportedReason(state));
    }
    await this.#checkpointTurnEnd(turn, phase.step);
    if (!leftNormally || this.inbox.size() === 0 || this.#disposing !== undefined) return false;
    // Another turn in the same running interval: a fresh turn signal, no stale latch.
    phase.controller = new AbortController();
    phase.latch = false;
    phase.step = 0;
    return true;
  }

  /** One step of the turn (or a pre-step that ends it): `again`, `stop` (turn over), or `leave` (done, may go on). */
  async #step(state: TurnState): Promise<StepVerdict> {
    const { hooks } = this.#services;
    const { phase, turn, signal } = state;
    throwIfAborted(signal);
    const step = phase.step + 1;
    const { decision, system } = await this.#preStep(state.target, turn, step, signal);
    if (decision.kind === 'reject') {
      state.outcome = { kind: 'blocked' };
      return 'stop';
    }
    if (state.outcome !== undefined && decision.messages.length === 0) return 'leave';
    if (phase.step === 0 && decision.messages.length === 0) {
      state.outcome = { kind: 'completed' };
      return 'stop';
    }
    throwIfAborted(signal);
    appendBuilt(this.session, 'step/start', stepData(turn, step));
    phase.step = step;
    let result: Awaited<ReturnType<StepRunner['run']>>;
    try {
      for (const message of decision.messages)
        this.session.append('user/message', message, { surfaceOp: 'append' });
      result = await this.#steps.run(turn, step, system, signal);
    } finally {
      appendBuilt(this.session, 'step/end', stepData(turn, step));
    }
    if (result.kind === 'failed') {
      // The failed step is closed; recovery (retry, compaction) runs between it and the next step.
      const error = new LlmError(result.failure);
      const answer = await hooks.waterfall(
        'agent/request-error',
        {
          agent: this,
          turn,
          step,
          provider: result.provider,
          model: result.model,
          error,
          failure: error.failure,
          previousFailures: state.failures.slice(),
          retryPolicy: result.retryPolicy,
          signal,
        },
        () => undefined,
        this.id,
      );
      throwIfAborted(signal);
      if (answer?.kind !== 'retry') throw error;
      state.failures.push(error.failure);
      state.target = 'next-step';
      return 'again';
    }
    if (state.failures.length > 0) state.failures.length = 0;
    // max-tokens is sticky for the reported reason only: a step whose tools ran is still owed a request.
    if (result.kind === 'max-tokens') state.maxTokens = true;
    state.outcome = result.kind === 'continue' ? undefined : { kind: result.kind };
    throwIfAborted(signal);
    if (state.outcome !== undefined && this.inbox.size('next-step') === 0) {
      await hooks.serial('agent/turn-stopping', { agent: this, turn, signal }, this.id);
      throwIfAborted(signal);
    }
    if (state.outcome !== undefined && this.inbox.size('next-step') === 0) return 'leave';
    state.target = 'next-step';
    return 'again';
  }

  async #preStep(
    target: InboxTarget,
    turn: number,
    step: number,
    signal: AbortSignal,
  ): Promise<{ decision: PreStepDecision; system: string }> {
    const { hooks, prompt } = this.#services;
    const batch = this.inbox.claim(target, turn);
    const sections = await prompt.assemble({
      sessionId: this.id,
      cwd: this.options.cwd,
      instructions: this.options.instructions,
      signal,
    });
    throwIfAborted(signal);
    const system = this.#render(sections);
    // Without a listener the decision is `enter` with the batch: no payload, no chain, no extra tick.
    if (!hooks.hears('agent/pre-step', this.id))
      return { decision: { kind: 'enter', messages: batch }, system };
    const decision = await hooks.waterfall(
      'agent/pre-step',
      { agent: this, messages: batch, turn, step, signal },
      (): PreStepDecision => ({ kind: 'enter', messages: batch }),
      this.id,
    );
    throwIfAborted(signal);
    return { decision: validateDecision(decision), system };
  }

  /**
   * The system prompt of these sections: the previous step's very string when every section is the same
   * (same id, text and order), so the prompt is not rebuilt each step and the request envelope compares
   * it with the last one by identity instead of character by character.
   */
  #render(sections: readonly PromptSection[]): string {
    const previous = this.#lastSections;
    if (previous !== undefined && sameSections(previous, sections)) return this.#lastSystem;
    const system = this.#services.prompt.render(sections);
    this.#lastSections = sections.map((section) => ({ ...section }));
    this.#lastSystem = system;
    return system;
  }

  #closeTurn(turn: number, reason: TurnEndReason): void {
    try {
      this.session.append('turn/end', { turn, reason }, adopted);
    } catch (error) {
      this.#reportError(turn, 0, error);
    }
  }

  async #checkpointTurnEnd(turn: number, step: number): Promise<void> {
    try {
      if (this.session.persistent) await this.session.checkpoint('turn-end');
    } catch (error) {
      this.#reportError(turn, step, error);
    }
  }

  #reportError(turn: number, step: number, error: unknown): void {
    this.#services.hooks.emit('agent/error', { agent: this, turn, step, error }, this.id);
  }

  #setStatus(status: AgentStatus): void {
    if (this.#status === status) return;
    this.#status = status;
    this.#services.hooks.emit('agent/status', { agent: this, status }, this.id);
  }
}

// The loop builds these payloads fresh and never touches them again, so the log adopts them uncopied.
const adopted = Object.freeze({ adopt: true as const });

/** What one turn carries from step to step. */
interface TurnState {
  readonly phase: Phase & { kind: 'running' };
  readonly turn: number;
  readonly signal: AbortSignal;
  outcome: TurnEndReason | undefined;
  target: InboxTarget;
  readonly failures: LlmFailure[];
  /** Some step of this turn finished `max-tokens`: a turn that otherwise completes reports that. */
  maxTokens: boolean;
}

function reportedReason(state: TurnState): TurnEndReason {
  const outcome = state.outcome ?? { kind: 'completed' };
  return outcome.kind === 'completed' && state.maxTokens ? { kind: 'max-tokens' } : outcome;
}

/** After a step: run another, stop the turn (blocked, nothing to do), or leave it normally. */
type StepVerdict = 'again' | 'stop' | 'leave';

function isDisposedAbort(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as { kind?: unknown } | undefined)?.kind === 'disposed';
}

// Snapshots, so every message that carries one shares it instead of holding a copy.
const steerSource: MessageSource = snapshotJson({ kind: 'steer' });
const injectSource: MessageSource = snapshotJson({ kind: 'inject' });

function defaultSource(target: InboxTarget, wakeup: boolean): MessageSource {
  if (target === 'next-turn') return userMessageSource;
  return wakeup ? steerSource : injectSource;
}

function toUserMessage(input: MessageInput, source: MessageSource): UserMessage {
  if (typeof input === 'string' || Array.isArray(input)) return createUserMessage(input as string, source);
  const message = input as UserMessage;
  if (message.role !== 'user' || typeof message.id !== 'string') {
    throw new HarnessError('INVALID_MESSAGE', 'only user-role messages with an id can be sent');
  }
  return snapshotJson(message);
}

function sameSections(left: readonly PromptSection[], right: readonly PromptSection[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) {
    const before = left[index]!;
    const after = right[index]!;
    if (before.id !== after.id || before.text !== after.text || before.order !== after.order) return false;
  }
  return true;
}

function validateDecision(decision: unknown): PreStepDecision {
  const kind = (decision as { kind?: unknown } | undefined)?.kind;
  if (kind === 'reject') return { kind: 'reject' };
  const messages = (decision as { messages?: unknown }).messages;
  if (kind !== 'enter' || !Array.isArray(messages)) {
    throw new HarnessError('INVALID_DECISION', 'agent/pre-step must answer enter(messages) or reject');
  }
  for (const message of messages as UserMessage[]) {
    if (message?.role !== 'user' || typeof message.id !== 'string') {
      throw new HarnessError('INVALID_DECISION', 'agent/pre-step may enter only user-role messages');
    }
  }
  return { kind: 'enter', messages: messages as UserMessage[] };
}
