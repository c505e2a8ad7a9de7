import type { AnySessionEvent } from './session-event.ts';

// What a packed entry holds, by kind: the event itself (an event kept as it is); for a chunk event its
// chunk, its text (deltas), its usage object, its block (block-end), its block index (block-start) or
// nothing (finish); for a boundary event its turn (turn events) or turn and step as one number (step
// events); for a message event its data or its message; for an inbox splice its message or its count.

/** An event kept as the very object committed. */
export const eventEntry = 0;
/** A chunk event keeping its chunk. */
export const chunkEntry = 1;
/** A text delta keeping its text; its block index is its run's. */
export const textDeltaEntry = 2;
/** A reasoning delta keeping its text; its block index is its run's. */
export const reasoningDeltaEntry = 3;
/** A `turn/start` keeping its turn. */
export const turnStartEntry = 4;
/** A `step/start` keeping turn × stepRange + step. */
export const stepStartEntry = 5;
/** A `step/end` keeping turn × stepRange + step. */
export const stepEndEntry = 6;
/** A `turn/end` keeping its turn: this plus the index of its reason's kind in `turnEndKinds`. */
export const turnEndEntry = 7;
const turnEndKinds = ['completed', 'max-tokens', 'blocked', 'aborted', 'interrupted'] as const;
/** A usage chunk keeping its usage object. */
export const usageEntry = turnEndEntry + turnEndKinds.length;
/** A finish chunk whose reason is only a kind: this plus the kind's index in `finishKinds`. */
export const finishEntry = usageEntry + 1;
const finishKinds = ['stop', 'tool-calls', 'max-tokens'] as const;
/** A block-start chunk keeping its block index: this plus the block type's index in `blockTypes`. */
export const blockStartEntry = finishEntry + finishKinds.length;
const blockTypes = ['text', 'reasoning', 'tool-call', 'image', 'tool-result'] as const;
/** A block-end chunk keeping its block; its block index is its run's. */
export const blockEndEntry = blockStartEntry + blockTypes.length;
/** A `user/message` appended to the surface, keeping its data (the message). */
export const userMessageEntry = blockEndEntry + 1;
/**
 * An `assistant/message` appended to the surface whose sources are exactly the run of chunk events just
 * before it, keeping its data; the sources are found again by walking back over that run.
 */
export const assistantMessageEntry = userMessageEntry + 1;
/**
 * Such an `assistant/message` whose data is turn, step, message and the usage of the run's last usage
 * chunk (or no usage when it has none), keeping only the message; the rest comes from the run.
 */
export const assistantReplyEntry = assistantMessageEntry + 1;
/** An inbox splice inserting one message at the front, keeping it: this plus the target's index. */
export const spliceInsertEntry = assistantReplyEntry + 1;
const inboxTargets = ['next-turn', 'next-step'] as const;
/** An inbox splice claiming from the front, keeping its count: this plus the target's index. */
export const spliceClaimEntry = spliceInsertEntry + inboxTargets.length;
/** One more than the largest kind. */
export const kindCount = spliceClaimEntry + inboxTargets.length;

/** The event type of chunk events. */
export const chunkEventType = 'assistant/chunk';
const spliceEventType = 'agent/inbox/spliced';

/** The event type of each packed kind. */
export const typeOfKind: readonly string[] = [
  '',
  chunkEventType,
  chunkEventType,
  chunkEventType,
  'turn/start',
  'step/start',
  'step/end',
  ...turnEndKinds.map(() => 'turn/end'),
  chunkEventType,
  ...finishKinds.map(() => chunkEventType),
  ...blockTypes.map(() => chunkEventType),
  chunkEventType,
  'user/message',
  'assistant/message',
  'assistant/message',
  ...inboxTargets.map(() => spliceEventType),
  ...inboxTargets.map(() => spliceEventType),
];

const eventKeys = ['type', 'seq', 'time', 'data'] as const;
const appendedKeys = ['type', 'seq', 'time', 'data', 'surfaceOp'] as const;
const sourcedKeys = ['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs'] as const;
const chunkDataKeys = ['turn', 'step', 'chunk'] as const;
const deltaKeys = ['type', 'index', 'text'] as const;
const usageKeys = ['type', 'usage'] as const;
const finishKeys = ['type', 'reason'] as const;
const blockStartKeys = ['type', 'index', 'blockType'] as const;
const blockEndKeys = ['type', 'index', 'block'] as const;
const turnKeys = ['turn'] as const;
const stepKeys = ['turn', 'step'] as const;
const turnEndKeys = ['turn', 'reason'] as const;
const reasonKeys = ['kind'] as const;
const replyKeys = ['turn', 'step', 'message'] as const;
const replyUsageKeys = ['turn', 'step', 'message', 'usage'] as const;
const insertKeys = ['target', 'start', 'inserted'] as const;
const claimKeys = ['target', 'start', 'inserted', 'removedCount'] as const;
/** Turn and step of a packed step event share one small integer: turn × stepRange + step. */
export const stepRange = 1 << 16;
const maxPackedTurn = (1 << 14) - 1;

/**
 * How an event can be stored, judged by its own shape: the kinds above for events of exactly the shapes
 * the loop and inbox commit; `eventEntry` for anything else (extra members, flags, other orders, odd
 * values). `bare` promises exactly type, seq, time and data. An `assistantMessageEntry` answer still
 * needs the log to confirm its sources.
 */
export function packedKindOf(event: AnySessionEvent, bare: boolean): number {
  const type = event.type;
  if (type === chunkEventType)
    return bare || hasExactKeys(event, eventKeys) ? chunkKindOf(event.data) : eventEntry;
  if (type === 'user/message' || type === 'assistant/message') {
    const sourced = type === 'assistant/message';
    if (!hasExactKeys(event, sourced ? sourcedKeys : appendedKeys) || event.surfaceOp !== 'append')
      return eventEntry;
    if (!isFrozenObject(event.data)) return eventEntry;
    return sourced ? assistantMessageEntry : userMessageEntry;
  }
  if (type === spliceEventType)
    return bare || hasExactKeys(event, eventKeys) ? spliceKindOf(event.data) : eventEntry;
  if (type !== 'turn/start' && type !== 'step/start' && type !== 'step/end' && type !== 'turn/end')
    return eventEntry;
  if (!bare && !hasExactKeys(event, eventKeys)) return eventEntry;
  const data = event.data as { turn?: unknown; step?: unknown; reason?: unknown };
  if (!Object.isFrozen(data) || !isPackedTurn(data.turn)) return eventEntry;
  switch (type) {
    case 'turn/start':
      return hasExactKeys(data, turnKeys) ? turnStartEntry : eventEntry;
    case 'turn/end': {
      const index = hasExactKeys(data, turnEndKeys) ? simpleKindIndex(data.reason, turnEndKinds) : -1;
      return index < 0 ? eventEntry : turnEndEntry + index;
    }
    default: {
      const step = data.step;
      if (!hasExactKeys(data, stepKeys) || !Number.isSafeInteger(step)) return eventEntry;
      if ((step as number) < 0 || (step as number) >= stepRange) return eventEntry;
      return type === 'step/start' ? stepStartEntry : stepEndEntry;
    }
  }
}

/** The entry a packed event keeps (for `assistantReplyEntry`, its message). */
export function entryOf(event: AnySessionEvent, kind: number): unknown {
  const data = event.data as {
    turn: number;
    step: number;
    chunk: { index?: number; text?: string; usage?: unknown; block?: unknown };
    message: unknown;
    inserted: readonly unknown[];
    removedCount: number;
  };
  switch (kind) {
    case chunkEntry:
      return data.chunk;
    case textDeltaEntry:
    case reasoningDeltaEntry:
      return data.chunk.text;
    case usageEntry:
      return data.chunk.usage;
    case blockEndEntry:
      return data.chunk.block;
    case turnStartEntry:
      return data.turn;
    case stepStartEntry:
    case stepEndEntry:
      return data.turn * stepRange + data.step;
    case userMessageEntry:
    case assistantMessageEntry:
      return data;
    case assistantReplyEntry:
      return data.message;
    default:
      if (kind >= spliceClaimEntry) return data.removedCount;
      if (kind >= spliceInsertEntry) return data.inserted[0];
      if (kind >= blockStartEntry) return data.chunk.index;
      if (kind >= finishEntry) return 0;
      return data.turn; // turn/end
  }
}

/** True when an `assistant/message` data object has the shape `assistantReplyEntry` rebuilds. */
export function isReplyShape(data: unknown): boolean {
  return (
    (hasExactKeys(data, replyKeys) || hasExactKeys(data, replyUsageKeys)) &&
    isFrozenObject((data as { message: unknown }).message)
  );
}

/** A packed event whose entry alone rebuilds it: boundaries, user messages and inbox splices. */
export function rebuildStandalone(seq: number, kind: number, entry: unknown, time: number): AnySessionEvent {
  if (kind === turnStartEntry) {
    return Object.freeze({ type: 'turn/start', seq, time, data: Object.freeze({ turn: entry as number }) });
  }
  if (kind === stepStartEntry || kind === stepEndEntry) {
    const turn = Math.floor((entry as number) / stepRange);
    const data = Object.freeze({ turn, step: (entry as number) - turn * stepRange });
    return Object.freeze({ type: typeOfKind[kind]!, seq, time, data });
  }
  if (kind >= turnEndEntry && kind < usageEntry) {
    const reason = Object.freeze({ kind: turnEndKinds[kind - turnEndEntry]! });
    const data = Object.freeze({ turn: entry as number, reason });
    return Object.freeze({ type: 'turn/end', seq, time, data });
  }
  if (kind === userMessageEntry)
    return Object.freeze({ type: 'user/message', seq, time, data: entry, surfaceOp: 'append' });
  const claim = kind >= spliceClaimEntry;
  const target = inboxTargets[kind - (claim ? spliceClaimEntry : spliceInsertEntry)]!;
  const data = claim
    ? { target, start: 0, inserted: Object.freeze([]), removedCount: entry as number }
    : { target, start: 0, inserted: Object.freeze([entry]) };
  return Object.freeze({ type: spliceEventType, seq, time, data: Object.freeze(data) });
}

/** A chunk from its packed entry (`index` is its run's block index, used by deltas and block ends). */
export function rebuildChunk(kind: number, entry: unknown, index: number): unknown {
  if (kind === chunkEntry) return entry;
  if (kind === textDeltaEntry || kind === reasoningDeltaEntry) {
    const type = kind === textDeltaEntry ? 'text-delta' : 'reasoning-delta';
    return Object.freeze({ type, index, text: entry as string });
  }
  if (kind === usageEntry) return Object.freeze({ type: 'usage', usage: entry });
  if (kind === blockEndEntry) return Object.freeze({ type: 'block-end', index, block: entry });
  if (kind >= blockStartEntry) {
    const blockType = blockTypes[kind - blockStartEntry]!;
    return Object.freeze({ type: 'block-start', index: entry as number, blockType });
  }
  return Object.freeze({ type: 'finish', reason: Object.freeze({ kind: finishKinds[kind - finishEntry]! }) });
}

/**
 * The kind `packedKindOf` gives an `assistant/chunk` event of exactly type, seq, time and data whose data
 * is exactly `{ turn, step, chunk }`, frozen, with safe-integer turn and step, and whose chunk `literalChunk`
 * made (its members exact by construction, frozen at every level): judged from the chunk's type and
 * values alone, without walking members again. `packedKindOf` judges every chunk here once its shape
 * is checked.
 */
export function literalChunkKind(chunk: unknown): number {
  const fields = chunk as { type: string; index?: unknown; blockType?: unknown; reason?: { kind: unknown } };
  switch (fields.type) {
    case 'text-delta':
      return isBlockIndex(fields.index) ? textDeltaEntry : chunkEntry;
    case 'reasoning-delta':
      return isBlockIndex(fields.index) ? reasoningDeltaEntry : chunkEntry;
    case 'usage':
      return usageEntry;
    case 'finish': {
      const position = finishKinds.indexOf(fields.reason!.kind as (typeof finishKinds)[number]);
      return position < 0 ? chunkEntry : finishEntry + position;
    }
    case 'block-start': {
      if (!isBlockIndex(fields.index)) return chunkEntry;
      const position = blockTypes.indexOf(fields.blockType as (typeof blockTypes)[number]);
      return position < 0 ? chunkEntry : blockStartEntry + position;
    }
    case 'block-end':
      return isBlockIndex(fields.index) ? blockEndEntry : chunkEntry;
    default:
      return chunkEntry;
  }
}

/** True for a turn number a packed entry can hold (a small integer). */
function isPackedTurn(turn: unknown): boolean {
  return Number.isSafeInteger(turn) && (turn as number) >= 0 && (turn as number) <= maxPackedTurn;
}

/** How a chunk event's data can be stored. */
function chunkKindOf(data: unknown): number {
  if (!hasExactKeys(data, chunkDataKeys)) return eventEntry;
  const { turn, step, chunk } = data as { turn: unknown; step: unknown; chunk: unknown };
  if (!Number.isSafeInteger(turn) || !Number.isSafeInteger(step) || !Object.isFrozen(data)) return eventEntry;
  return hasLiteralShape(chunk) ? literalChunkKind(chunk) : chunkEntry;
}

/**
 * True for a chunk of exactly the members `literalChunk` gives its type, with the string text and frozen
 * parts `literalChunkKind` relies on (the values it judges itself).
 */
function hasLiteralShape(chunk: unknown): boolean {
  const fields = chunk as {
    type?: unknown;
    text?: unknown;
    usage?: unknown;
    reason?: unknown;
    block?: unknown;
  };
  switch (fields?.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return hasExactKeys(chunk, deltaKeys) && typeof fields.text === 'string';
    case 'usage':
      return hasExactKeys(chunk, usageKeys) && isFrozenObject(fields.usage);
    case 'finish':
      return (
        hasExactKeys(chunk, finishKeys) &&
        hasExactKeys(fields.reason, reasonKeys) &&
        Object.isFrozen(fields.reason)
      );
    case 'block-start':
      return hasExactKeys(chunk, blockStartKeys);
    case 'block-end':
      return hasExactKeys(chunk, blockEndKeys) && isFrozenObject(fields.block);
    default:
      return false;
  }
}

/** How an inbox splice's data can be stored: a claim from the front or one message put at the front. */
function spliceKindOf(data: unknown): number {
  if (!isFrozenObject(data)) return eventEntry;
  const { target, start, inserted, removedCount } = data as {
    target: unknown;
    start: unknown;
    inserted: unknown;
    removedCount: unknown;
  };
  const targetIndex = inboxTargets.indexOf(target as (typeof inboxTargets)[number]);
  if (targetIndex < 0 || start !== 0 || !Array.isArray(inserted) || !Object.isFrozen(inserted))
    return eventEntry;
  if (hasExactKeys(data, insertKeys))
    return inserted.length === 1 && isFrozenObject(inserted[0])
      ? spliceInsertEntry + targetIndex
      : eventEntry;
  if (!hasExactKeys(data, claimKeys) || inserted.length !== 0 || !isBlockIndex(removedCount))
    return eventEntry;
  return (removedCount as number) > 0 ? spliceClaimEntry + targetIndex : eventEntry;
}

/** The index in `kinds` of a frozen reason that is only `{ kind }`, or -1. */
function simpleKindIndex(reason: unknown, kinds: readonly string[]): number {
  if (!hasExactKeys(reason, reasonKeys) || !Object.isFrozen(reason)) return -1;
  return kinds.indexOf((reason as { kind: unknown }).kind as string);
}

/** True for a block index a packed entry can hold (a small non-negative integer). */
function isBlockIndex(index: unknown): boolean {
  return Number.isSafeInteger(index) && (index as number) >= 0 && (index as number) < 2 ** 30;
}

/** True for a frozen object (arrays included). */
export function isFrozenObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.isFrozen(value);
}

/** True when `value` is an object whose own enumerable keys are exactly `keys`, in that order. */
function hasExactKeys(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  let position = 0;
  for (const key in value) {
    if (key !== keys[position]) return false;
    position++;
  }
  return position === keys.length;
}

/** True when two JSON values are equal, object keys in the same order (they serialize identically). */
export function jsonEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) if (!jsonEqual(left[index], right[index])) return false;
    return true;
  }
  if (Array.isArray(right)) return false;
  const leftRecord = left as Record<string, unknown>;
  const rightRecord = right as Record<string, unknown>;
  const rightKeys = Object.keys(rightRecord);
  let position = 0;
  for (const key in leftRecord) {
    if (rightKeys[position] !== key || !jsonEqual(leftRecord[key], rightRecord[key])) return false;
    position++;
  }
  return position === rightKeys.length;
}
