import type {
  AssistantMessage,
  StreamChunk,
  TokenUsage,
  ToolCallBlock,
  ToolResultMessage,
} from '../llm/index.ts';
import { isJsonSnapshot, literalChunk, snapshotAt, snapshotUsage } from '../llm/index.ts';
import { literalChunkKind } from './packed-event.ts';
import { appendBuilt } from './session.ts';
import type { Session } from './session.ts';
import { appendSnapshotError } from './session-error.ts';
import type { SessionEvent, SessionEventMap } from './session-event.ts';

// Typed constructors of the data the loop appends most (per step: its boundaries, every chunk, each tool
// call), for `appendBuilt`: each returns a frozen plain object of exactly the shape `append` would have
// committed for the same input, so the log is unchanged and only the snapshot's walk over it is saved.
// Numbers come from the loop and are checked by the enclosure rules (they must name the open turn and
// step); anything a provider supplied is snapshotted here.

/** The data of `step/start` and `step/end`. */
export function stepData(turn: number, step: number): SessionEventMap['step/start'] {
  return Object.freeze({ turn, step });
}

/**
 * Appends the `assistant/chunk` event of a provider's chunk in the open step, its chunk snapshotted
 * (validated, copied, frozen) exactly as `append` would. A chunk of a common shape is copied as one
 * literal whose packed kind follows from it, so the log does not judge it again; anything else takes the
 * general walk. Throws SessionError `INVALID_JSON_DATA` naming the offending spot, as `append` does.
 */
export function appendChunk(
  session: Session,
  turn: number,
  step: number,
  chunk: StreamChunk,
): SessionEvent<'assistant/chunk'> {
  const literal = literalChunk(chunk);
  if (literal !== undefined) {
    const data = Object.freeze({ turn, step, chunk: literal });
    // The loop's turn and step are safe integers; were they not, the log judges the event itself.
    const kind = Number.isSafeInteger(turn) && Number.isSafeInteger(step) ? literalChunkKind(literal) : -1;
    return appendBuilt(session, 'assistant/chunk', data, undefined, kind);
  }
  let copy: StreamChunk;
  try {
    copy = snapshotAt(chunk, 'assistant/chunk', '.data.chunk', 'none');
  } catch (error) {
    throw appendSnapshotError(error);
  }
  return appendBuilt(session, 'assistant/chunk', Object.freeze({ turn, step, chunk: copy }));
}

/**
 * The data of a `tool/call` event for a call block of the logged assistant message, or undefined when
 * one of its fields is not a string (such data takes `append`'s own snapshot).
 */
export function toolCallData(
  turn: number,
  step: number,
  call: ToolCallBlock,
): SessionEventMap['tool/call'] | undefined {
  const { id, name, arguments: rawArguments } = call;
  if (typeof id !== 'string' || typeof name !== 'string' || typeof rawArguments !== 'string')
    return undefined;
  return Object.freeze({ turn, step, callId: id, name, arguments: rawArguments });
}

/**
 * The data of an `assistant/message` event for a message made by `createAssistantMessage`, its usage
 * snapshotted (throws SessionError `INVALID_JSON_DATA` as `append` does); undefined when the message is no
 * such snapshot (such data takes `append`'s own snapshot).
 */
export function assistantMessageData(
  turn: number,
  step: number,
  message: AssistantMessage,
  usage: TokenUsage | undefined,
): SessionEventMap['assistant/message'] | undefined {
  if (!isJsonSnapshot(message)) return undefined;
  if (usage === undefined) return Object.freeze({ turn, step, message });
  let copy: TokenUsage;
  try {
    copy = snapshotUsage(usage, 'assistant/message', '.data.usage');
  } catch (error) {
    throw appendSnapshotError(error);
  }
  return Object.freeze({ turn, step, message, usage: copy });
}

/**
 * The data of a `tool/result` event without error or meta for a message made by `createToolResultMessage`,
 * or undefined when the message is no such snapshot.
 */
export function toolResultData(
  turn: number,
  step: number,
  message: ToolResultMessage,
): SessionEventMap['tool/result'] | undefined {
  return isJsonSnapshot(message) ? Object.freeze({ turn, step, message }) : undefined;
}
