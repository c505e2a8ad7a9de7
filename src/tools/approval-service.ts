import { randomUUID } from 'node:crypto';
import type { Disposer } from '../hooks/index.ts';
import { HarnessError, errorChainText } from '../llm/index.ts';
import type { ToolPreview } from './tool.ts';

/** A question put to a human: may this call run? */
export interface ApprovalRequest {
  readonly requestId: string;
  readonly sessionId: string;
  readonly turn: number;
  readonly step: number;
  readonly callId: string;
  readonly name: string;
  /** The raw argument string the model produced. */
  readonly arguments: string;
  readonly reason?: string;
  /** What the call would change (a diff), when its tool can tell before running. */
  readonly preview?: ToolPreview;
}

/**
 * A human's answer; `allow-session` / `deny-session` also decide identical calls for the rest of the
 * session; `aborted` means the turn was cancelled while waiting.
 */
export type ApprovalDecision =
  | { decision: 'allow-once' }
  | { decision: 'allow-session' }
  | { decision: 'deny'; reason?: string }
  | { decision: 'deny-session'; reason?: string }
  | { decision: 'aborted' };

/**
 * What `ApprovalService.request` resolves: the decision, and for a denial nobody made, why the service
 * made it (`no-approver`: none is attached; `approver-failed`: an approver threw or answered nonsense).
 */
export type ApprovalOutcome = ApprovalDecision & { failure?: 'no-approver' | 'approver-failed' };

const decisionKinds: ReadonlySet<string> = new Set([
  'allow-once',
  'allow-session',
  'deny',
  'deny-session',
  'aborted',
]);

/** True for a well-formed decision (an approver's answer is checked before it is trusted). */
function isDecision(value: unknown): value is ApprovalDecision {
  if (typeof value !== 'object' || value === null) return false;
  const { decision, reason } = value as { decision?: unknown; reason?: unknown };
  return (
    typeof decision === 'string' &&
    decisionKinds.has(decision) &&
    (reason === undefined || typeof reason === 'string')
  );
}

/**
 * Someone who can answer approvals (a UI, a terminal prompt, a test). `notify` may resolve a decision
 * itself, or leave it to a later `ApprovalService.answer` call.
 */
export interface Approver {
  /** Limits the approver to one session; unset hears every session. */
  readonly sessionId?: string;
  notify(
    request: ApprovalRequest,
    signal: AbortSignal,
  ): void | ApprovalDecision | Promise<ApprovalDecision | void>;
}

interface Pending {
  request: ApprovalRequest;
  resolve: (decision: ApprovalOutcome) => void;
}

/** The approvals seam: pending requests and their answers; fails closed when no approver is attached. */
export class ApprovalService {
  readonly #approvers = new Set<Approver>();
  readonly #pending = new Map<string, Pending>();

  /** Attaches an approver; returns its disposer. */
  attach(approver: Approver): Disposer {
    this.#approvers.add(approver);
    return () => {
      this.#approvers.delete(approver);
    };
  }

  /** True when some approver would hear requests of this session. */
  hasApprover(sessionId: string): boolean {
    for (const approver of this.#approvers) {
      if (approver.sessionId === undefined || approver.sessionId === sessionId) return true;
    }
    return false;
  }

  /** The requests still waiting, optionally of one session, oldest first. */
  pending(sessionId?: string): ApprovalRequest[] {
    return [...this.#pending.values()]
      .map((entry) => entry.request)
      .filter((request) => sessionId === undefined || request.sessionId === sessionId);
  }

  /** Answers a pending request; false when no such request waits. */
  answer(requestId: string, decision: ApprovalDecision): boolean {
    if (!isDecision(decision)) {
      throw new HarnessError(
        'INVALID_DECISION',
        'an approval answer must be allow-once, allow-session, deny or aborted',
      );
    }
    return this.#settle(requestId, decision);
  }

  #settle(requestId: string, outcome: ApprovalOutcome): boolean {
    const entry = this.#pending.get(requestId);
    if (entry === undefined) return false;
    this.#pending.delete(requestId);
    entry.resolve(outcome);
    return true;
  }

  // Fail closed: an approver that breaks denies the call instead of leaving it waiting forever.
  #fail(requestId: string, detail: string): void {
    this.#settle(requestId, {
      decision: 'deny',
      reason: `the approver failed: ${detail}`,
      failure: 'approver-failed',
    });
  }

  /**
   * Asks for a decision and waits for it; resolves `aborted` when the signal aborts first, and `deny`
   * at once when no approver is attached for the session (fail closed).
   */
  request(
    fields: Omit<ApprovalRequest, 'requestId'> & { requestId?: string },
    signal: AbortSignal,
  ): Promise<ApprovalOutcome> {
    if (signal.aborted) return Promise.resolve({ decision: 'aborted' });
    const approvers = [...this.#approvers].filter(
      (approver) => approver.sessionId === undefined || approver.sessionId === fields.sessionId,
    );
    if (approvers.length === 0) {
      return Promise.resolve({
        decision: 'deny',
        reason: 'this call needs approval and no approver is attached',
        failure: 'no-approver',
      });
    }
    const request: ApprovalRequest = Object.freeze({
      ...fields,
      requestId: fields.requestId ?? randomUUID(),
    });
    return new Promise<ApprovalOutcome>((resolve) => {
      const onAbort = (): void => {
        this.#settle(request.requestId, { decision: 'aborted' });
      };
      this.#pending.set(request.requestId, {
        request,
        resolve: (decision) => {
          signal.removeEventListener('abort', onAbort);
          resolve(decision);
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      for (const approver of approvers) {
        let answer: ReturnType<Approver['notify']>;
        try {
          answer = approver.notify(request, signal);
        } catch (error) {
          this.#fail(request.requestId, errorChainText(error));
          return;
        }
        if (answer === undefined) continue;
        if (isThenable(answer)) {
          Promise.resolve(answer).then(
            (decision) => this.#take(request.requestId, decision),
            (error: unknown) => this.#fail(request.requestId, errorChainText(error)),
          );
        } else {
          // An approver may answer synchronously, with the decision itself.
          this.#take(request.requestId, answer);
        }
      }
    });
  }

  #take(requestId: string, answer: unknown): void {
    if (answer === undefined) return;
    if (isDecision(answer)) this.#settle(requestId, answer);
    else this.#fail(requestId, `it answered ${describeAnswer(answer)}, not a decision`);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function describeAnswer(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 120) ?? String(value);
  } catch {
    // A cyclic or otherwise unserializable answer: its type is description enough.
    return typeof value;
  }
}
