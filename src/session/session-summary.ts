import { messageText } from '../llm/index.ts';
import type { UserMessage } from '../llm/index.ts';
import type { SessionHeader } from './session.ts';
import type { AnySessionEvent } from './session-event.ts';
import type { SessionSummary } from './session-store.ts';

/** Builds a listing row from a header and its events: title from the first prompt, turn count, times. */
export function summarizeSession(header: SessionHeader, events: readonly AnySessionEvent[]): SessionSummary {
  let turns = 0;
  let title = header.title;
  for (const event of events) {
    if (event.type === 'turn/start') turns++;
    else if (title === undefined && event.type === 'user/message') {
      const message = event.data as UserMessage;
      if (message.source.kind === 'user') title = messageText(message).split('\n', 1)[0]!.slice(0, 80);
    }
  }
  const summary: SessionSummary = {
    id: header.id,
    createdAt: header.createdAt,
    updatedAt: events.length > 0 ? events[events.length - 1]!.time : header.createdAt,
    turns,
    events: events.length,
  };
  if (title !== undefined) summary.title = title;
  if (header.cwd !== undefined) summary.cwd = header.cwd;
  if (header.parentSession !== undefined) summary.parentSession = header.parentSession;
  return summary;
}
