import type { AnySessionEvent } from './session-event.ts';
import { SessionError } from './session-error.ts';

type Coordinates = { turn?: unknown; step?: unknown };

/** Codes of tool results that crash repair writes for calls that never started (no `tool/call`). */
const unstartedResultCodes: ReadonlySet<string> = new Set(['TOOL_NOT_STARTED']);

/**
 * Tracks open turn, open step and pending tool calls, and rejects events that break the enclosure and
 * numbering rules: turns 1, 2, 3… never nesting; steps from 1 per turn; chunks, messages, calls and
 * results inside the open turn and step; one result per logged call.
 */
export class EnclosureTracker {
  lastTurn = 0;
  openTurn: number | undefined;
  openStep: number | undefined;
  lastStep = 0;
  /** Calls logged by `tool/call` in the open step that have no result yet: callId → tool/call seq. */
  readonly pendingCalls = new Map<string, number>();
  /** CallIds answered in the open step. */
  readonly answeredCalls = new Set<string>();

  /** Throws SessionError when the candidate may not be appended now; changes nothing. */
  check(event: AnySessionEvent): void {
    const data = event.data as Coordinates;
    switch (event.type) {
      case 'turn/start': {
        if (this.openTurn !== undefined) this.#fail(event, `turn ${this.openTurn} is still open`);
        if (data.turn !== this.lastTurn + 1) this.#fail(event, `expected turn ${this.lastTurn + 1}`);
        return;
      }
      case 'turn/end': {
        if (this.openTurn === undefined || data.turn !== this.openTurn)
          this.#fail(event, 'names no open turn');
        if (this.openStep !== undefined) this.#fail(event, `step ${this.openStep} is still open`);
        return;
      }
      case 'step/start': {
        this.#requireTurn(event, data);
        if (this.openStep !== undefined) this.#fail(event, `step ${this.openStep} is still open`);
        if (data.step !== this.lastStep + 1) this.#fail(event, `expected step ${this.lastStep + 1}`);
        return;
      }
      case 'step/end':
        this.#requireStep(event, data);
        return;
      case 'assistant/chunk':
      case 'assistant/message':
      case 'request/failed':
        this.#requireStep(event, data);
        return;
      case 'tool/call': {
        this.#requireStep(event, data);
        const callId = (event.data as { callId?: unknown }).callId;
        if (typeof callId !== 'string' || callId === '')
          this.#fail(event, 'callId must be a non-empty string');
        if (this.pendingCalls.has(callId) || this.answeredCalls.has(callId)) {
          this.#fail(event, `call ${callId} was already logged in this step`);
        }
        return;
      }
      case 'tool/result': {
        if (typeof event.surfaceOp === 'object') {
          if (this.openTurn === undefined) this.#fail(event, 'a replacing tool/result needs an open turn');
          return;
        }
        this.#requireStep(event, data);
        const result = event.data as {
          message?: { source?: { callId?: unknown } };
          error?: { code?: unknown };
        };
        const callId = result.message?.source?.callId;
        if (typeof callId !== 'string') this.#fail(event, 'tool/result message has no source.callId');
        if (this.pendingCalls.has(callId)) return;
        const code = result.error?.code;
        if (typeof code === 'string' && unstartedResultCodes.has(code) && !this.answeredCalls.has(callId))
          return;
        this.#fail(event, `no pending tool/call ${callId} in this step`);
        return;
      }
      case 'request/header':
      case 'request/context':
      case 'todo/write':
        if (this.openTurn === undefined) this.#fail(event, 'needs an open turn');
        return;
      default:
        return;
    }
  }

  /** Applies an accepted event to the tracked state. */
  apply(event: AnySessionEvent): void {
    const data = event.data as { turn: number; step: number; callId: string };
    switch (event.type) {
      case 'turn/start':
        this.openTurn = data.turn;
        this.lastTurn = data.turn;
        this.lastStep = 0;
        this.#resetCalls();
        return;
      case 'turn/end':
        this.openTurn = undefined;
        this.#resetCalls();
        return;
      case 'step/start':
        this.openStep = data.step;
        this.lastStep = data.step;
        this.#resetCalls();
        return;
      case 'step/end':
        this.openStep = undefined;
        this.#resetCalls();
        return;
      case 'tool/call':
        this.pendingCalls.set(data.callId, event.seq);
        return;
      case 'tool/result': {
        if (typeof event.surfaceOp === 'object') return;
        const callId = (event.data as { message: { source: { callId: string } } }).message.source.callId;
        this.pendingCalls.delete(callId);
        this.answeredCalls.add(callId);
        return;
      }
      default:
        return;
    }
  }

  #resetCalls(): void {
    if (this.pendingCalls.size > 0) this.pendingCalls.clear();
    if (this.answeredCalls.size > 0) this.answeredCalls.clear();
  }

  #requireTurn(event: AnySessionEvent, data: Coordinates): void {
    if (this.openTurn === undefined || data.turn !== this.openTurn) {
      this.#fail(event, `must name the open turn (${this.openTurn ?? 'none'})`);
    }
  }

  #requireStep(event: AnySessionEvent, data: Coordinates): void {
    this.#requireTurn(event, data);
    if (this.openStep === undefined || data.step !== this.openStep) {
      this.#fail(event, `must name the open step (${this.openStep ?? 'none'})`);
    }
  }

  #fail(event: AnySessionEvent, reason: string): never {
    throw new SessionError('ENCLOSURE_VIOLATION', `${event.type} rejected: ${reason}`);
  }
}
