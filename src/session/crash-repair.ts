import type { AssistantMessage, ContentBlock } from '../llm/index.ts';
import { createToolResultMessage } from '../llm/index.ts';
import type { AnySessionEvent } from './session-event.ts';

interface PendingCall {
  callId: string;
  callSeq: number | undefined;
}

/**
 * Closes a log (or a tail of one that starts where no turn is open) whose last turn is open (a crash): appends, never rewrites, an error result for every
 * call that never settled (`TOOL_OUTCOME_UNKNOWN` if it started, `TOOL_NOT_STARTED` if not), `step/end`
 * for an open step and `turn/end { kind: 'interrupted' }`. A balanced log is returned unchanged.
 */
export function repairInterruptedTail(events: readonly AnySessionEvent[]): readonly AnySessionEvent[] {
  let openTurn: number | undefined;
  let openStep: number | undefined;
  let pending: PendingCall[] = [];
  const logged = new Map<string, number>();
  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        openTurn = (event.data as { turn: number }).turn;
        pending = [];
        logged.clear();
        break;
      case 'turn/end':
        openTurn = undefined;
        openStep = undefined;
        pending = [];
        logged.clear();
        break;
      case 'step/start':
        openStep = (event.data as { step: number }).step;
        break;
      case 'step/end':
        openStep = undefined;
        pending = [];
        logged.clear();
        break;
      case 'assistant/message': {
        if (openStep === undefined) break;
        const message = (event.data as { message: AssistantMessage }).message;
        for (const block of message.content as ContentBlock[]) {
          if (block.type === 'tool-call') pending.push({ callId: block.id, callSeq: logged.get(block.id) });
        }
        break;
      }
      case 'tool/call': {
        const callId = (event.data as { callId: string }).callId;
        logged.set(callId, event.seq);
        const entry = pending.find((call) => call.callId === callId);
        if (entry !== undefined) entry.callSeq = event.seq;
        break;
      }
      case 'tool/result': {
        if (typeof event.surfaceOp === 'object') break;
        const callId = (event.data as { message: { source: { callId: string } } }).message.source.callId;
        pending = pending.filter((call) => call.callId !== callId);
        break;
      }
      default:
        break;
    }
  }
  if (openTurn === undefined) return events;
  const repaired = [...events];
  const last = events[events.length - 1];
  const time = last?.time ?? Date.now();
  // `events` may be the tail of a log (a resume read only what follows a snapshot): seqs go on from it.
  const firstSeq = events[0]?.seq ?? 0;
  const push = (event: Omit<AnySessionEvent, 'seq' | 'time'>): void => {
    repaired.push({ ...event, seq: firstSeq + repaired.length, time });
  };
  if (openStep !== undefined) {
    for (const call of pending) {
      const started = call.callSeq !== undefined;
      const text = started
        ? 'Error: this tool call started but Rein stopped before its outcome was recorded; the outcome is unknown. Retry only if the work is read-only or idempotent.'
        : 'Error: this tool call was never started because Rein stopped first; it may be retried.';
      const data = {
        turn: openTurn,
        step: openStep,
        message: createToolResultMessage(call.callId, [{ type: 'text', text }], true),
        error: started
          ? { name: 'ToolOutcomeUnknownError', code: 'TOOL_OUTCOME_UNKNOWN' }
          : { name: 'ToolNotStartedError', code: 'TOOL_NOT_STARTED' },
      };
      push(
        started
          ? { type: 'tool/result', data, surfaceOp: 'append', sourceEventSeqs: [call.callSeq!] }
          : { type: 'tool/result', data, surfaceOp: 'append' },
      );
    }
    push({ type: 'step/end', data: { turn: openTurn, step: openStep } });
  }
  push({ type: 'turn/end', data: { turn: openTurn, reason: { kind: 'interrupted' } } });
  return repaired;
}
