// Format 1's line kinds: a compact line is `[kind, dt, data]` (or `[type, dt, data, extras]` for any other
// event), where `dt` is the time since the previous event (the header's `createdAt` for the first) and
// the seq is the line's position. Each kind rebuilds fields a reader already knows from the lines
// before it. The numbers are part of the format: never renumber, only add.
/** An `assistant/chunk` of the open step: data is the chunk. */
export const chunkKind = 0;
/** A text delta continuing the current block index: data is its text. */
export const textDeltaKind = 1;
/** A reasoning delta continuing the current block index: data is its text. */
export const reasoningDeltaKind = 2;
/** A block start: data is `[index, blockType]`. */
export const blockStartKind = 3;
/** A block end whose block is what the step's deltas of that index built: data is the index. */
export const blockEndKind = 4;
/** A finish chunk whose reason is only a kind: data is the kind. */
export const finishKind = 5;
/** A `step/start` of the open turn: data is the step. */
export const stepStartKind = 6;
/** A `step/end` of the open step: data is 0. */
export const stepEndKind = 7;
/** A `turn/start` of the turn after the last one: data is 0. */
export const turnStartKind = 8;
/** A `turn/end` of the open turn: data is its reason. */
export const turnEndKind = 9;
/** An `assistant/message` made of the chunk run before it: data is `[id, source | 0, usage?]`. */
export const replyKind = 10;
/** A `tool/call` of a tool-call block of the last reply: data is that block's place among its calls. */
export const toolCallKind = 11;
/** A `tool/result` answering a `tool/call` of the step: data is `[back, id, content, isError, error?]`. */
export const toolResultKind = 12;
/** A tool-call delta opening the current block index: data is `[id, name, argumentsDelta]`. */
export const toolCallStartKind = 13;
/** A tool-call delta continuing the current block index: data is its arguments delta. */
export const argumentsDeltaKind = 14;
/** One more than the largest line kind. */
export const kindCount = 15;

/** The event type each numbered line kind decodes to (a reader can tell a line's type from its kind). */
export const compactKindTypes: readonly string[] = [
  'assistant/chunk',
  'assistant/chunk',
  'assistant/chunk',
  'assistant/chunk',
  'assistant/chunk',
  'assistant/chunk',
  'step/start',
  'step/end',
  'turn/start',
  'turn/end',
  'assistant/message',
  'tool/call',
  'tool/result',
  'assistant/chunk',
  'assistant/chunk',
];
