import { randomUUID } from 'node:crypto';
import type { Disposer } from '../hooks/index.ts';

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
 * Someone who can answer approvals (a UI, a terminal prompt, a test). `notify` may resolve a decision
 * itself, or leave it to a later `ApprovalService.answer` call.
 */
export interface Approver {
  /** Limits the approver to one session; unset hears every session. */
  readonly sessionId?: string;
  notify(request: ApprovalRequest, signal: AbortSignal): void | Promise<ApprovalDecision | void>;
}

interface Pending {
  request: ApprovalRequest;
  resolve: (decision: ApprovalDecision) => void;
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
    const entry = this.#pending.get(requestId);
    if (entry === undefined) return false;
    this.#pending.delete(requestId);
    entry.resolve(decision);
    return true;
  }

  /**
   * Asks for a decision and waits for it; resolves `aborted` when the signal aborts first, and `deny`
   * at once when no approver is attached for the session (fail closed).
   */
  request(
    fields: Omit<ApprovalRequest, 'requestId'> & { requestId?: string },
    signal: AbortSignal,
  ): Promise<ApprovalDecision> {
    if (signal.aborted) return Promise.resolve({ decision: 'aborted' });
    const approvers = [...this.#approvers].filter(
      (approver) => approver.sessionId === undefined || approver.sessionId === fields.sessionId,
    );
    if (approvers.length === 0) {
      return Promise.resolve({
        decision: 'deny',
        reason: 'this call needs approval and no approver is attached',
      });
    }
    const request: ApprovalRequest = Object.freeze({
      ...fields,
      requestId: fields.requestId ?? randomUUID(),
    });
    return new Promise<ApprovalDecision>((resolve) => {
      const onAbort = (): void => {
        this.answer(request.requestId, { decision: 'aborted' });
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
          console.error('[rein] approver failed to take a request:', error);
          continue;
        }
        if (answer instanceof Promise) {
          answer.then(
            (decision) => {
              if (decision !== undefined) this.answer(request.requestId, decision);
            },
            (error: unknown) => {
              this.answer(request.requestId, {
                decision: 'deny',
                reason: `approver failed: ${String(error)}`,
              });
            },
          );
        }
      }
    });
  }
}
