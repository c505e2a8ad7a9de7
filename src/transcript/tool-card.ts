import type { ToolResultBlock } from '../llm/index.ts';
import type { DurableEvent } from '../session/index.ts';
import type { ToolApproval, ToolCard, TranscriptActivity } from './transcript-item.ts';
import { childSessionOf } from './transcript-parts.ts';

type EventOf<Type extends DurableEvent['type']> = DurableEvent & { type: Type };

/** A new card for a call the log showed first as a block of `assistant/message` or as a `tool/call`. */
export function toolCard(
  seq: number,
  callId: string,
  name: string,
  args: string,
  turn: number,
  step: number,
  state: ToolCard['state'],
): ToolCard {
  return { kind: 'tool', key: `k${seq}:${callId}`, seq, callId, name, arguments: args, turn, step, state };
}

/** What a `tool/approval-requested` record changes on its card (in place), and the activity it shows. */
export function recordApprovalRequest(
  card: ToolCard,
  event: EventOf<'tool/approval-requested'>,
): TranscriptActivity {
  card.state = 'awaiting-approval';
  card.approval = {
    requestId: event.data.requestId,
    ...(event.data.reason !== undefined ? { reason: event.data.reason } : {}),
  };
  return { kind: 'approval', name: event.data.name };
}

/**
 * What a `tool/approval-decided` record changes on a card and its pending `approval` (in place), and the
 * activity it shows: the tool running, or waiting for the model after a denial.
 */
export function recordApprovalDecision(
  card: ToolCard,
  approval: ToolApproval,
  event: EventOf<'tool/approval-decided'>,
): TranscriptActivity {
  approval.decision = event.data.decision;
  if (event.data.reason !== undefined) approval.decisionReason = event.data.reason;
  if (card.state === 'awaiting-approval') card.state = 'running';
  return event.data.decision === 'deny' || event.data.decision === 'deny-session'
    ? { kind: 'waiting' }
    : { kind: 'tool', name: card.name };
}

/** What a `tool/progress` record of a running call changes on its card (in place), and the activity. */
export function recordProgress(card: ToolCard, event: EventOf<'tool/progress'>): TranscriptActivity {
  card.progress = {
    progress: event.data.progress,
    ...(event.data.total !== undefined ? { total: event.data.total } : {}),
    ...(event.data.message !== undefined ? { message: event.data.message } : {}),
  };
  return { kind: 'tool', name: card.name, progress: card.progress };
}

/** What a call's `tool/result` (its result block) changes on its card (in place): result, state, child. */
export function recordResult(card: ToolCard, block: ToolResultBlock, event: EventOf<'tool/result'>): void {
  const isError = block.isError === true;
  card.result = {
    text: block.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n'),
    content: block.content,
    isError,
    ...(event.data.error !== undefined ? { code: event.data.error.code } : {}),
    ...(event.data.meta !== undefined ? { meta: event.data.meta } : {}),
  };
  const child = childSessionOf(event.data.meta);
  if (child !== undefined) card.childSessionId = child;
  card.state = isError ? 'failed' : 'done';
}
