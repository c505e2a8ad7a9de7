import type { AnySessionEvent } from '../session-event.ts';
import { CompactLogState, hasKeys, isCount, isRun, jsonString } from './compact-log-state.ts';
import type { CompactLogResumeState, Shape } from './compact-log-state.ts';
import { RepeatedJsonString } from './repeated-json-string.ts';
import { expandCompactLine } from './compact-line-expand.ts';
import {
  chunkKind,
  textDeltaKind,
  reasoningDeltaKind,
  blockStartKind,
  blockEndKind,
  finishKind,
  stepStartKind,
  stepEndKind,
  turnStartKind,
  turnEndKind,
  replyKind,
  toolCallKind,
  toolResultKind,
  toolCallStartKind,
  argumentsDeltaKind,
} from './compact-line-kinds.ts';
import { chunkEntry, eventEntry } from '../packed-event.ts';

// Each line starts with its kind: the opening text is made once, not per line.
const chunkPrefix = `[${chunkKind},`;
const textDeltaPrefix = `[${textDeltaKind},`;
const reasoningDeltaPrefix = `[${reasoningDeltaKind},`;
const blockStartPrefix = `[${blockStartKind},`;
const blockEndPrefix = `[${blockEndKind},`;
const finishPrefix = `[${finishKind},`;
const stepStartPrefix = `[${stepStartKind},`;
const stepEndPrefix = `[${stepEndKind},`;
const turnStartPrefix = `[${turnStartKind},`;
const turnEndPrefix = `[${turnEndKind},`;
const replyPrefix = `[${replyKind},`;
const toolCallPrefix = `[${toolCallKind},`;
const toolResultPrefix = `[${toolResultKind},`;
const toolCallStartPrefix = `[${toolCallStartKind},`;
const argumentsDeltaPrefix = `[${argumentsDeltaKind},`;

/** Turns events into the lines of one session file, in seq order. */
export interface SessionLineEncoder {
  /**
   * The line of the next event (its seq must follow the last one's), newline included. `committed`
   * promises an envelope as `Session` builds it (see `committedEnvelope`), which is then not checked;
   * `packedKind` promises the shape the session's log judged the event to have (`packedKindOf`).
   */
  encode(event: AnySessionEvent, committed?: boolean, packedKind?: number): string;
}

// What \`encode(event, true)\` relies on: an event \`Session.append\` built (what the file writer receives)
// has exactly the members type, seq, time and data, then those of ignorable (only \`true\`), surfaceOp
// and sourceEventSeqs that it carries, in that order. Events parsed from a file need not: they are
// encoded with the envelope checked.
const committedEnvelope = ['type', 'seq', 'time', 'data', 'ignorable', 'surfaceOp', 'sourceEventSeqs'];

/** Format 0's encoder: every event as its full JSON envelope. */
export const fullEnvelopeEncoder: SessionLineEncoder = {
  encode: (event) => `${JSON.stringify(event)}\n`,
};

/**
 * Format 1's encoder and decoder in one: both sides keep the same small state (the previous time, the
 * open turn and step, what the current chunk run built, the last reply's tool calls), updated from each
 * whole event, so a line can leave out what that state already says. The encoder uses a compact kind
 * only when the event is exactly what the kind rebuilds (same members, order and values); anything
 * else is written in the generic compact form, or as the full envelope when even that cannot hold it.
 */

export class CompactLogCodec implements SessionLineEncoder {
  readonly #state: CompactLogState;
  // The members whose texts repeat from step to step in a tool loop, quoted once per new value.
  readonly #blockTypes = new RepeatedJsonString();
  readonly #toolNames = new RepeatedJsonString();
  readonly #argumentTexts = new RepeatedJsonString();
  readonly #finishKinds = new RepeatedJsonString();

  /** A codec at the start of a log, or (`resume`) going on from a turn or step boundary inside one. */
  constructor(createdAt: number, resume?: CompactLogResumeState) {
    this.#state = new CompactLogState(createdAt, resume);
  }

  /** The seq of the next event. */
  get length(): number {
    return this.#state.seq;
  }

  encode(event: AnySessionEvent, committed = false, packedKind: number = eventEntry): string {
    const line = this.#compact(event, committed, packedKind) ?? `${JSON.stringify(event)}\n`;
    this.#state.observe(event);
    return line;
  }

  /**
   * The event of one parsed line (an array, or a full envelope object checked by `checkEnvelope`); a
   * string says why the line is not a valid record.
   */
  decode(
    value: unknown,
    checkEnvelope: (value: unknown, seq: number) => string | undefined,
  ): AnySessionEvent | string {
    let event: AnySessionEvent | string;
    if (Array.isArray(value)) event = expandCompactLine(this.#state, value);
    else {
      const problem = checkEnvelope(value, this.#state.seq);
      event = problem ?? (value as AnySessionEvent);
    }
    if (typeof event !== 'string') this.#state.observe(event);
    return event;
  }

  #compact(event: AnySessionEvent, committed: boolean, packedKind: number): string | undefined {
    const time = event.time;
    const dt = time - this.#state.time;
    if (event.seq !== this.#state.seq || this.#state.time + dt !== time || !Number.isFinite(dt))
      return undefined;
    const data = event.data as Shape;
    const step = this.#state.openStep;
    const turn = this.#state.openTurn;
    // The session's log vouched for this event's envelope and data members (`packedKindOf`): for chunks
    // and boundaries those checks are skipped, only this codec's state is compared.
    const vouched = packedKind !== eventEntry;
    switch (event.type) {
      case 'assistant/chunk':
        if (step === undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, chunkDataKeys))) break;
        if (data.turn === turn && data.step === step)
          return this.#chunkLine(data.chunk as Shape, dt, vouched && packedKind !== chunkEntry);
        break;
      case 'step/start':
        if (step !== undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, stepKeys))) break;
        if (data.turn === turn && isCount(data.step)) return `${stepStartPrefix}${dt},${data.step}]\n`;
        break;
      case 'step/end':
        if (step === undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, stepKeys))) break;
        if (data.turn === turn && data.step === step) return `${stepEndPrefix}${dt},0]\n`;
        break;
      case 'turn/start':
        if (turn !== undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, turnKeys))) break;
        if (data.turn === this.#state.lastTurn + 1) return `${turnStartPrefix}${dt},0]\n`;
        break;
      case 'turn/end':
        if (turn === undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, turnEndKeys))) break;
        if (data.turn === turn) return `${turnEndPrefix}${dt},${JSON.stringify(data.reason)}]\n`;
        break;
      case 'assistant/message':
        if (step !== undefined)
          return this.#replyLine(event, data, dt, committed) ?? this.#genericLine(event, dt, committed);
        break;
      case 'tool/call':
        if (step !== undefined && isPlainEvent(event, committed))
          return this.#toolCallLine(data, dt) ?? this.#genericLine(event, dt, committed);
        break;
      case 'tool/result':
        if (step !== undefined)
          return this.#toolResultLine(event, data, dt, committed) ?? this.#genericLine(event, dt, committed);
        break;
      default:
        break;
    }
    return this.#genericLine(event, dt, committed);
  }

  /** `vouched`: the log vouched for the chunk's members for its type (`literalChunkKind`'s shapes). */
  #chunkLine(chunk: Shape, dt: number, vouched = false): string {
    const chunkType = chunk.type;
    if (
      (chunkType === 'text-delta' || chunkType === 'reasoning-delta') &&
      (vouched || hasKeys(chunk, deltaKeys))
    ) {
      if (chunk.index === this.#state.runIndex && this.#state.runStart >= 0 && typeof chunk.text === 'string')
        return `${chunkType === 'text-delta' ? textDeltaPrefix : reasoningDeltaPrefix}${dt},${jsonString(chunk.text)}]\n`;
    } else if (
      chunkType === 'tool-call-delta' &&
      chunk.index === this.#state.runIndex &&
      this.#state.runStart >= 0
    ) {
      const { id, name, argumentsDelta } = chunk;
      if (hasKeys(chunk, callStartKeys)) {
        const parts =
          typeof id === 'string' && typeof name === 'string' && typeof argumentsDelta === 'string'
            ? `${jsonString(id)},${this.#toolNames.of(name)},${this.#argumentTexts.of(argumentsDelta)}`
            : `${JSON.stringify(id)},${JSON.stringify(name)},${JSON.stringify(argumentsDelta)}`;
        return `${toolCallStartPrefix}${dt},[${parts}]]\n`;
      }
      if (hasKeys(chunk, argumentsDeltaKeys) && typeof argumentsDelta === 'string')
        return `${argumentsDeltaPrefix}${dt},${jsonString(argumentsDelta)}]\n`;
    } else if (
      chunkType === 'block-start' &&
      (vouched || hasKeys(chunk, blockStartKeys)) &&
      isCount(chunk.index)
    ) {
      if (typeof chunk.blockType === 'string')
        return `${blockStartPrefix}${dt},[${chunk.index as number},${this.#blockTypes.of(chunk.blockType)}]]\n`;
    } else if (
      chunkType === 'block-end' &&
      (vouched || hasKeys(chunk, blockEndKeys)) &&
      isCount(chunk.index)
    ) {
      if (this.#state.isBuiltBlock(chunk.index as number, chunk.block))
        return `${blockEndPrefix}${dt},${chunk.index as number}]\n`;
    } else if (chunkType === 'finish' && (vouched || hasKeys(chunk, finishKeys))) {
      const reason = chunk.reason as Shape;
      if ((vouched || hasKeys(reason, kindKeys)) && typeof reason.kind === 'string')
        return `${finishPrefix}${dt},${this.#finishKinds.of(reason.kind)}]\n`;
    }
    return `${chunkPrefix}${dt},${JSON.stringify(chunk)}]\n`;
  }

  // The reply and result lines below prove by construction that the compact form rebuilds the event:
  // exact member names in order, the values the state rebuilds compared member by member, and only the
  // parts the line carries serialized (events are lossless JSON as the session commits them).
  #replyLine(event: AnySessionEvent, data: Shape, dt: number, committed: boolean): string | undefined {
    const run = this.#state.runStart;
    if (run < 0 || !isSourcedEvent(event, committed)) return undefined;
    if (!isRun(event.sourceEventSeqs, run, event.seq)) return undefined;
    // One pass over the members: the reply's three, and a fourth only if it is the usage.
    const members = keysWithOptional(data, replyKeys, 'usage');
    if (members < 0) return undefined;
    const withUsage = members > 0;
    if (data.turn !== this.#state.openTurn || data.step !== this.#state.openStep) return undefined;
    const message = data.message as Shape;
    if (!hasKeys(message, assistantKeys) || message.role !== 'assistant' || typeof message.id !== 'string')
      return undefined;
    if (!this.#state.isRunContent(message.content)) return undefined;
    const same = this.#state.isReplySource(message.source);
    const source = same ? '0' : JSON.stringify(message.source);
    const usage = withUsage ? JSON.stringify(data.usage) : '';
    // A source whose JSON is 0 would read as "the last reply's source": that reply stays generic.
    if (typeof source !== 'string' || (!same && source === '0') || typeof usage !== 'string')
      return undefined;
    return `${replyPrefix}${dt},[${jsonString(message.id)},${source}${withUsage ? `,${usage}` : ''}]]\n`;
  }

  #toolCallLine(data: Shape, dt: number): string | undefined {
    if (
      !hasKeys(data, toolCallKeys) ||
      data.turn !== this.#state.openTurn ||
      data.step !== this.#state.openStep
    )
      return undefined;
    const count = this.#state.callCount;
    for (let position = 0; position < count; position++) {
      const call = this.#state.callBlock(position)!;
      if (call.id === data.callId && call.name === data.name && call.arguments === data.arguments)
        return typeof call.arguments === 'string' ? `${toolCallPrefix}${dt},${position}]\n` : undefined;
    }
    return undefined;
  }

  #toolResultLine(event: AnySessionEvent, data: Shape, dt: number, committed: boolean): string | undefined {
    if (!isSourcedEvent(event, committed)) return undefined;
    const sources = event.sourceEventSeqs!;
    if (!Array.isArray(sources) || sources.length !== 1) return undefined;
    const callSeq = sources[0]!;
    const callId = this.#state.stepCallId(callSeq);
    const dataMembers = keysWithOptional(data, toolResultKeys, 'error');
    const withError = dataMembers > 0;
    if (callId === undefined || dataMembers < 0) return undefined;
    if (data.turn !== this.#state.openTurn || data.step !== this.#state.openStep) return undefined;
    const message = data.message as Shape;
    if (!hasKeys(message, messageKeys) || typeof message.id !== 'string' || message.role !== 'user')
      return undefined;
    const origin = message.source as Shape;
    if (!hasKeys(origin, toolSourceKeys) || origin.kind !== 'tool' || origin.callId !== callId)
      return undefined;
    const blocks = message.content;
    if (!Array.isArray(blocks) || blocks.length !== 1) return undefined;
    const block = blocks[0] as Shape;
    const blockMembers = keysWithOptional(block, resultBlockKeys, 'isError');
    const isError = blockMembers > 0;
    if (blockMembers < 0) return undefined;
    if (block.type !== 'tool-result' || block.toolCallId !== callId || (isError && block.isError !== true))
      return undefined;
    const content = textContentJson(block.content) ?? JSON.stringify(block.content);
    const error = withError ? JSON.stringify(data.error) : '';
    if (typeof content !== 'string' || typeof error !== 'string') return undefined;
    return `${toolResultPrefix}${dt},[${event.seq - callSeq},${jsonString(message.id)},${content},${isError ? 1 : 0}${withError ? `,${error}` : ''}]]\n`;
  }

  #genericLine(event: AnySessionEvent, dt: number, committed: boolean): string | undefined {
    let extras = '';
    let members = 4;
    if (event.ignorable !== undefined) {
      extras += '"i":1,';
      members++;
    }
    if (event.surfaceOp !== undefined) {
      extras += `"o":${JSON.stringify(event.surfaceOp)},`;
      members++;
    }
    if (event.sourceEventSeqs !== undefined) {
      extras += `"s":${JSON.stringify(event.sourceEventSeqs)},`;
      members++;
    }
    // Only the envelope members, in the order `Session` builds them, can be rebuilt from the extras.
    if (
      !committed &&
      (!hasKeys(
        event,
        committedEnvelope.filter((key) => key in event),
      ) ||
        Object.keys(event).length !== members)
    )
      return undefined;
    const head = `[${JSON.stringify(event.type)},${dt},${JSON.stringify(event.data)}`;
    return extras === '' ? `${head}]\n` : `${head},{${extras.slice(0, -1)}}]\n`;
  }
}

const plainKeys = ['type', 'seq', 'time', 'data'];
const sourcedEventKeys = ['type', 'seq', 'time', 'data', 'surfaceOp', 'sourceEventSeqs'];
const chunkDataKeys = ['turn', 'step', 'chunk'];
const deltaKeys = ['type', 'index', 'text'];
const blockStartKeys = ['type', 'index', 'blockType'];
const callStartKeys = ['type', 'index', 'id', 'name', 'argumentsDelta'];
const argumentsDeltaKeys = ['type', 'index', 'argumentsDelta'];
const blockEndKeys = ['type', 'index', 'block'];
const finishKeys = ['type', 'reason'];
const kindKeys = ['kind'];
const stepKeys = ['turn', 'step'];
const turnKeys = ['turn'];
const turnEndKeys = ['turn', 'reason'];
const replyKeys = ['turn', 'step', 'message'];
const assistantKeys = ['id', 'role', 'content', 'source'];
const toolCallKeys = ['turn', 'step', 'callId', 'name', 'arguments'];
const toolResultKeys = ['turn', 'step', 'message'];
const messageKeys = ['id', 'role', 'content', 'source'];
const toolSourceKeys = ['kind', 'callId'];
const textBlockKeys = ['type', 'text'];
const resultBlockKeys = ['type', 'toolCallId', 'content'];

/** The JSON of content made only of text blocks (what most tools answer), built from its texts. */
function textContentJson(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  let json = '[';
  for (let position = 0; position < content.length; position++) {
    const block = content[position] as Shape;
    if (!hasKeys(block, textBlockKeys) || block.type !== 'text' || typeof block.text !== 'string')
      return undefined;
    json += `${position === 0 ? '' : ','}{"type":"text","text":${jsonString(block.text)}}`;
  }
  return `${json}]`;
}

/** True for an event of exactly type, seq, time and data (`committed`: its envelope is `Session`'s). */
function isPlainEvent(event: AnySessionEvent, committed: boolean): boolean {
  if (!committed) return hasKeys(event, plainKeys);
  return (
    event.ignorable === undefined && event.surfaceOp === undefined && event.sourceEventSeqs === undefined
  );
}

/** True for an event of exactly type, seq, time, data, surfaceOp `append` and sourceEventSeqs. */
function isSourcedEvent(event: AnySessionEvent, committed: boolean): boolean {
  if (event.surfaceOp !== 'append') return false;
  return committed
    ? event.ignorable === undefined && event.sourceEventSeqs !== undefined
    : hasKeys(event, sourcedEventKeys);
}

/**
 * 0 when `value` is an object whose own keys are exactly `keys` in that order, 1 when they are `keys`
 * then `optional`, -1 otherwise: one pass where two `hasKeys` calls would take two.
 */
function keysWithOptional(value: unknown, keys: readonly string[], optional: string): number {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return -1;
  let position = 0;
  for (const key in value) {
    if (position < keys.length ? key !== keys[position] : position > keys.length || key !== optional)
      return -1;
    position++;
  }
  return position === keys.length ? 0 : position === keys.length + 1 ? 1 : -1;
}
