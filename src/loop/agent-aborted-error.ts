import { HarnessError } from '../llm/index.ts';
import type { AgentCancelCause } from '../agent/index.ts';

/** Thrown inside the driver when the turn signal is aborted; carries the winning cause. */
export class AgentAbortedError extends HarnessError {
  readonly cancelCause: AgentCancelCause | undefined;
  constructor(cause: unknown) {
    super('ABORTED', 'the agent was cancelled');
    this.name = 'AbortError';
    this.cancelCause = isCancelCause(cause) ? cause : undefined;
  }
}

/** Throws AgentAbortedError when the signal is aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AgentAbortedError(signal.reason);
}

/** True for a well-formed AgentCancelCause. */
export function isCancelCause(value: unknown): value is AgentCancelCause {
  if (typeof value !== 'object' || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  if (kind === 'hook') return typeof (value as { reason?: unknown }).reason === 'string';
  return kind === 'user' || kind === 'parent' || kind === 'disposed';
}
