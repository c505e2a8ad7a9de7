import type { ApprovalDecision, ApprovalRequest, Approver } from '../index.ts';

/** One question waiting on screen. */
export interface PendingApproval {
  readonly request: ApprovalRequest;
  answer(decision: ApprovalDecision): void;
}

/**
 * Approvals answered inside the TUI: requests wait in arrival order and the screen shows the first; a
 * request whose turn is cancelled (Esc, a parent's stop) leaves the list resolved `aborted`.
 */
export class TuiApprover implements Approver {
  readonly #pending: PendingApproval[] = [];
  readonly #onChange: () => void;

  constructor(onChange: () => void) {
    this.#onChange = onChange;
  }

  /** The questions waiting, oldest first. */
  get pending(): readonly PendingApproval[] {
    return this.#pending;
  }

  notify(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    return new Promise<ApprovalDecision>((resolve) => {
      if (signal.aborted) {
        resolve({ decision: 'aborted' });
        return;
      }
      const entry: PendingApproval = {
        request,
        answer: (decision) => {
          const index = this.#pending.indexOf(entry);
          if (index < 0) return;
          this.#pending.splice(index, 1);
          signal.removeEventListener('abort', onAbort);
          resolve(decision);
          this.#onChange();
        },
      };
      const onAbort = (): void => entry.answer({ decision: 'aborted' });
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.push(entry);
      this.#onChange();
    });
  }
}
