import { randomUUID } from 'node:crypto';
import type { EmitEvent, HookBus, WaterfallEvent } from '../hooks/index.ts';
import type { ContentBlock, UserMessage } from '../llm/index.ts';
import { HarnessError, errorChainText, isAbortError } from '../llm/index.ts';
import type { Session } from '../session/index.ts';
import { registerSessionEventTypes } from '../session/index.ts';
import type { ApprovalDecision, ApprovalOutcome, ApprovalService } from './approval-service.ts';
import type { Tool, ToolOutput, ToolPreview, ToolProgress } from './tool.ts';
import { checkToolArguments } from './tool-arguments.ts';
import { CallContext } from './call-context.ts';
import type { ToolRegistry, ToolSelection } from './tool-registry.ts';

/** One tool call as the pipeline sees it. */
export interface ToolCallInfo {
  readonly callId: string;
  readonly name: string;
  /** The raw argument string the model produced. */
  readonly rawArguments: string;
  /** Parsed, validated arguments (undefined when the call is unknown or invalid). */
  readonly args: unknown;
  readonly tool: Tool | undefined;
  readonly sessionId: string;
  readonly turn: number;
  readonly step: number;
}

/** The outcome of one call, before it is logged. */
export type ToolExecutionResult =
  | {
      isError: false;
      content: ContentBlock[];
      meta?: unknown;
      additionalContexts?: UserMessage[];
      concludesTurn?: true;
    }
  | {
      isError: true;
      content: ContentBlock[];
      error: { message: string; info?: { name: string; code: string } };
      meta?: unknown;
      additionalContexts?: UserMessage[];
    };

/** The answer of `tools/pre-execute`: run, refuse, or ask a human. */
export type PreToolDecision =
  { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; reason?: string };

/** The answer of `tools/post-execute`: keep (optionally rewriting content) or block with feedback. */
export type PostToolDecision =
  | { kind: 'accept'; content?: ContentBlock[]; additionalContexts?: UserMessage[] }
  | { kind: 'block'; feedback: string; additionalContexts?: UserMessage[] };

/** Payload of the tool waterfalls. */
export interface ToolHookPayload {
  readonly call: ToolCallInfo;
  readonly session: Session;
  readonly signal: AbortSignal;
}

declare module '../hooks/hook-event-map.ts' {
  interface HookEventMap {
    'tools/pre-execute': WaterfallEvent<ToolHookPayload, PreToolDecision>;
    'tools/execute': WaterfallEvent<ToolHookPayload, ToolExecutionResult>;
    'tools/post-execute': WaterfallEvent<ToolHookPayload & { result: ToolExecutionResult }, PostToolDecision>;
    'tools/result': EmitEvent<{ call: ToolCallInfo; result: ToolExecutionResult; session: Session }>;
    /** A running call reported progress (its body called `reportProgress`), after it was recorded. */
    'tools/progress': EmitEvent<{ call: ToolCallInfo; progress: ToolProgress; session: Session }>;
  }
}

declare module '../session/session-event.ts' {
  interface SessionEventMap {
    'tool/approval-requested': {
      requestId: string;
      turn: number;
      step: number;
      callId: string;
      name: string;
      arguments: string;
      reason?: string;
    };
    'tool/approval-decided': {
      requestId: string;
      callId: string;
      decision: ApprovalDecision['decision'];
      reason?: string;
    };
    'tool/progress': {
      turn: number;
      step: number;
      callId: string;
      progress: number;
      total?: number;
      message?: string;
    };
  }
}

registerSessionEventTypes(['tool/approval-requested', 'tool/approval-decided', 'tool/progress']);

/** The dispatch modes of the `tools/*` events. */
export const toolEventModes = {
  'tools/pre-execute': 'waterfall',
  'tools/execute': 'waterfall',
  'tools/post-execute': 'waterfall',
  'tools/result': 'emit',
  'tools/progress': 'emit',
} as const;

/** A call moving through the pipeline. */
export interface ToolExecution {
  readonly call: ToolCallInfo;
  readonly session: Session;
  readonly signal: AbortSignal;
  readonly deferred: UserMessage[];
  concludes: boolean;
}

/** The result of the prepare stage: final (skips post-execute), post (goes to post-execute), or dispatch. */
export type PreparedCall =
  | { kind: 'final'; result: ToolExecutionResult }
  | { kind: 'post'; result: ToolExecutionResult }
  | { kind: 'dispatch' };

/** Builds an error result with a code the model and UIs can route on. */
export function toolErrorResult(message: string, info?: { name: string; code: string }): ToolExecutionResult {
  const error: { message: string; info?: { name: string; code: string } } = { message };
  if (info !== undefined) error.info = info;
  return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }], error };
}

/** The result for a call that was cancelled before its body started. */
export function abortedBeforeDispatchResult(): ToolExecutionResult {
  return {
    isError: true,
    content: [{ type: 'text', text: 'Error: tool call aborted before dispatch' }],
    error: {
      message: 'tool call aborted before dispatch',
      info: { name: 'AbortError', code: 'ABORTED_BEFORE_DISPATCH' },
    },
  };
}

const dispatchNow: PreparedCall = Object.freeze({ kind: 'dispatch' });

function abortedResult(additionalContexts?: UserMessage[]): ToolExecutionResult {
  const result: ToolExecutionResult = {
    isError: true,
    content: [{ type: 'text', text: 'Error: tool call aborted' }],
    error: { message: 'tool call aborted', info: { name: 'AbortError', code: 'ABORTED' } },
  };
  if (additionalContexts !== undefined && additionalContexts.length > 0)
    result.additionalContexts = additionalContexts;
  return result;
}

/**
 * The guarded pipeline `tools/pre-execute` → approval → `tools/execute` → `tools/post-execute`, split
 * into stages so the scheduler can serialize preparation, overlap bodies and finalize in model order.
 */
export class ToolPipeline {
  readonly #hooks: HookBus;
  readonly #registry: ToolRegistry;
  readonly #approvals: ApprovalService;

  constructor(options: { hooks: HookBus; registry: ToolRegistry; approvals: ApprovalService }) {
    this.#hooks = options.hooks;
    this.#registry = options.registry;
    this.#approvals = options.approvals;
    this.#hooks.declare(toolEventModes);
  }

  /** Resolves the tool and validates the raw arguments into a call description. */
  describe(
    fields: {
      callId: string;
      name: string;
      rawArguments: string;
      sessionId: string;
      turn: number;
      step: number;
    },
    selection: ToolSelection,
  ): { call: ToolCallInfo; problem: ToolExecutionResult | undefined } {
    // The session id is the agent id: tools registered for one agent are found for its calls alone.
    const tool = this.#registry.get(fields.name, selection, fields.sessionId);
    if (tool === undefined) {
      const known = this.#registry.list(selection, fields.sessionId).map((t) => t.name);
      return {
        call: { ...fields, args: undefined, tool: undefined },
        problem: toolErrorResult(
          `unknown tool '${fields.name}'. Available tools: ${known.join(', ') || 'none'}`,
          {
            name: 'ToolError',
            code: 'UNKNOWN_TOOL',
          },
        ),
      };
    }
    const check = checkToolArguments(tool, fields.rawArguments);
    if (!check.ok) {
      return {
        call: { ...fields, args: undefined, tool },
        problem: toolErrorResult(`invalid arguments for ${tool.name}: ${check.message}`, {
          name: 'ToolError',
          code: 'INVALID_ARGUMENTS',
        }),
      };
    }
    // Written out, not spread: the spread into a literal with two more keys was the hottest line of a step.
    const call: ToolCallInfo = {
      callId: fields.callId,
      name: fields.name,
      rawArguments: fields.rawArguments,
      sessionId: fields.sessionId,
      turn: fields.turn,
      step: fields.step,
      args: check.value,
      tool,
    };
    return { call, problem: undefined };
  }

  /** Pre-execute and approval; never overlaps another call's preparation. */
  prepare(execution: ToolExecution): Promise<PreparedCall> {
    const { call, signal } = execution;
    if (signal.aborted) return Promise.resolve({ kind: 'final', result: abortedBeforeDispatchResult() });
    // Nobody listens on tools/pre-execute: the decision is `allow`, with no chain and no extra ticks.
    if (!this.#hooks.hears('tools/pre-execute', call.sessionId)) return Promise.resolve(dispatchNow);
    return this.#decide(execution);
  }

  async #decide(execution: ToolExecution): Promise<PreparedCall> {
    const { call, session, signal } = execution;
    let decision: PreToolDecision;
    try {
      decision = await this.#hooks.waterfall(
        'tools/pre-execute',
        { call, session, signal },
        () => ({ kind: 'allow' }) as const,
        call.sessionId,
      );
    } catch (error) {
      return { kind: 'final', result: listenerFailure('tools/pre-execute', error) };
    }
    if (decision.kind === 'ask') decision = await this.#ask(execution, decision.reason);
    if (signal.aborted) return { kind: 'post', result: abortedBeforeDispatchResult() };
    if (decision.kind === 'deny') {
      return {
        kind: 'post',
        result: toolErrorResult(decision.reason, { name: 'ToolDeniedError', code: 'TOOL_DENIED' }),
      };
    }
    return { kind: 'dispatch' };
  }

  /** Runs the body through the `tools/execute` waterfall; the only stage that runs concurrently. */
  async dispatch(execution: ToolExecution): Promise<ToolExecutionResult> {
    const { call, session, signal } = execution;
    let result: ToolExecutionResult;
    try {
      result = await this.#hooks.waterfall(
        'tools/execute',
        { call, session, signal },
        () => this.#runBody(execution),
        call.sessionId,
      );
    } catch (error) {
      result = signal.aborted && isAbortError(error) ? abortedResult() : bodyFailure(error);
    }
    if (signal.aborted && !result.isError) return abortedResult(result.additionalContexts);
    return result;
  }

  /** Post-execute (unless the prepared result was final), then the `tools/result` notification. */
  finalize(
    execution: ToolExecution,
    prepared: ToolExecutionResult,
    final: boolean,
  ): Promise<ToolExecutionResult> {
    const { call, session, signal } = execution;
    if (!final && this.#hooks.hears('tools/post-execute', call.sessionId)) {
      return this.#review(execution, prepared);
    }
    // Nobody listens on tools/post-execute: the result is accepted as it is, with no extra ticks.
    const result =
      !final && signal.aborted && !prepared.isError ? abortedResult(prepared.additionalContexts) : prepared;
    this.#hooks.emit('tools/result', { call, result, session }, call.sessionId);
    return Promise.resolve(result);
  }

  async #review(execution: ToolExecution, prepared: ToolExecutionResult): Promise<ToolExecutionResult> {
    const { call, session, signal } = execution;
    let result = prepared;
    try {
      const decision = await this.#hooks.waterfall(
        'tools/post-execute',
        { call, session, signal, result },
        () => ({ kind: 'accept' }) as const,
        call.sessionId,
      );
      result = applyPostDecision(result, decision);
    } catch (error) {
      result = listenerFailure('tools/post-execute', error);
    }
    if (signal.aborted && !result.isError) result = abortedResult(result.additionalContexts);
    this.#hooks.emit('tools/result', { call, result, session }, call.sessionId);
    return result;
  }

  async #ask(execution: ToolExecution, reason: string | undefined): Promise<PreToolDecision> {
    const { call, session, signal } = execution;
    const fields = {
      sessionId: call.sessionId,
      turn: call.turn,
      step: call.step,
      callId: call.callId,
      name: call.name,
      arguments: call.rawArguments,
      ...(reason !== undefined ? { reason } : {}),
    };
    const requestId = randomUUID();
    const { sessionId: _sessionId, ...requestData } = fields;
    // The durable request lands before any approver hears of it, so the log leads every UI.
    session.append('tool/approval-requested', { requestId, ...requestData });
    // The preview is for the live approver only: the result's own diff is what the log keeps.
    const preview = previewOf(call);
    const decisionPromise = this.#approvals.request(
      { ...fields, requestId, ...(preview !== undefined ? { preview } : {}) },
      signal,
    );
    const decision = await decisionPromise;
    const decided: {
      requestId: string;
      callId: string;
      decision: ApprovalDecision['decision'];
      reason?: string;
    } = {
      requestId,
      callId: call.callId,
      decision: decision.decision,
    };
    if (
      (decision.decision === 'deny' || decision.decision === 'deny-session') &&
      decision.reason !== undefined
    )
      decided.reason = decision.reason;
    session.append('tool/approval-decided', decided);
    switch (decision.decision) {
      case 'allow-once':
      case 'allow-session':
        return { kind: 'allow' };
      case 'aborted':
        return { kind: 'deny', reason: 'tool call aborted while waiting for approval' };
      case 'deny':
      case 'deny-session':
        return { kind: 'deny', reason: denialReason(call.name, reason, decision) };
    }
  }

  async #runBody(execution: ToolExecution): Promise<ToolExecutionResult> {
    const { call, signal } = execution;
    const tool = call.tool;
    if (tool === undefined) {
      return toolErrorResult(`unknown tool '${call.name}'`, { name: 'ToolError', code: 'UNKNOWN_TOOL' });
    }
    const context = new CallContext(execution, tool.name, this.#hooks);
    let output: ToolOutput;
    try {
      output = await tool.execute(call.args, context);
    } catch (error) {
      if (signal.aborted) return abortedResult(execution.deferred.slice());
      return bodyFailure(error);
    }
    return renderOutput(output, execution);
  }
}

function renderOutput(output: ToolOutput, execution: ToolExecution): ToolExecutionResult {
  const normalized = typeof output === 'string' || Array.isArray(output) ? { content: output } : output;
  const content: ContentBlock[] =
    typeof normalized.content === 'string'
      ? [{ type: 'text', text: normalized.content }]
      : normalized.content;
  if (normalized.concludesTurn === true) execution.concludes = true;
  const extras: { meta?: unknown; additionalContexts?: UserMessage[] } = {};
  if (normalized.meta !== undefined) extras.meta = normalized.meta;
  if (execution.deferred.length > 0) extras.additionalContexts = execution.deferred.slice();
  if (normalized.isError === true) {
    const error: { message: string; info?: { name: string; code: string } } = { message: firstText(content) };
    if (normalized.errorCode !== undefined) error.info = { name: 'ToolError', code: normalized.errorCode };
    return { isError: true, content, error, ...extras };
  }
  const result: ToolExecutionResult = { isError: false, content, ...extras };
  if (execution.concludes) result.concludesTurn = true;
  return result;
}

function applyPostDecision(result: ToolExecutionResult, decision: PostToolDecision): ToolExecutionResult {
  if (decision.kind === 'block') {
    const blocked = toolErrorResult(decision.feedback, { name: 'ToolBlockedError', code: 'TOOL_BLOCKED' });
    blocked.content = [{ type: 'text', text: decision.feedback }];
    if (decision.additionalContexts !== undefined) blocked.additionalContexts = decision.additionalContexts;
    if (result.meta !== undefined) blocked.meta = result.meta;
    return blocked;
  }
  const next: ToolExecutionResult = { ...result };
  if (decision.content !== undefined) next.content = decision.content;
  if (decision.additionalContexts !== undefined) {
    next.additionalContexts = [...(result.additionalContexts ?? []), ...decision.additionalContexts];
  }
  return next;
}

/** The text the model reads for a denied approval: the person's reason, or why nobody could decide. */
function denialReason(
  name: string,
  askReason: string | undefined,
  outcome: ApprovalOutcome & { decision: 'deny' | 'deny-session' },
): string {
  const because = askReason !== undefined && askReason !== '' ? ` (${askReason})` : '';
  if (outcome.failure === 'no-approver') {
    return `${name} needs approval${because} and no approver is attached, so it was denied`;
  }
  if (outcome.failure === 'approver-failed') {
    return `${name} needs approval${because}, but ${outcome.reason ?? 'the approver failed'}, so it was denied`;
  }
  const given = outcome.reason !== undefined && outcome.reason !== '' ? `: ${outcome.reason}` : '';
  return `the user denied ${name}${given}`;
}

function bodyFailure(error: unknown): ToolExecutionResult {
  const message = errorChainText(error);
  if (error instanceof HarnessError) return toolErrorResult(message, { name: error.name, code: error.code });
  const name = error instanceof Error ? error.name : 'Error';
  return toolErrorResult(message, { name, code: 'TOOL_FAILED' });
}

function listenerFailure(event: string, error: unknown): ToolExecutionResult {
  return toolErrorResult(`${event} listener failed: ${errorChainText(error)}`, {
    name: 'ListenerError',
    code: 'LISTENER_FAILED',
  });
}

function firstText(content: readonly ContentBlock[]): string {
  for (const block of content) if (block.type === 'text') return block.text;
  return 'tool reported an error';
}

/** The tool's preview of a call that asks for approval; none when it has none or cannot compute one. */
function previewOf(call: ToolCallInfo): ToolPreview | undefined {
  if (call.tool?.preview === undefined || call.args === undefined) return undefined;
  try {
    return call.tool.preview(call.args);
  } catch {
    // A call whose preview fails (no match, unreadable file) is asked without one; running it reports why.
    return undefined;
  }
}
