import type { AnySessionEvent } from '../session-event.ts';
import { CompactLogState, hasKeys, isCount, isRun } from './compact-log-state.ts';
import type { CompactLogResumeState, Shape } from './compact-log-state.ts';
import { RepeatedJsonString } from './repeated-json-string.ts';
import { expandCompactLine } from './compact-line-expand.ts';
import { LineBytes } from './line-bytes.ts';
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

// Each line starts with `[kind,`: the opening text is made once, not per line.
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

const comma = 0x2c;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const newline = 0x0a;

/** Turns events into the lines of one session file, in seq order. */
export interface SessionLineEncoder {
  /**
   * The line of the next event (its seq must follow the last one's), newline included. `committed`
   * promises an envelope as `Session` builds it (see `committedEnvelope`), which is then not checked;
   * `packedKind` promises the shape the session's log judged the event to have (`packedKindOf`).
   */
  encode(event: AnySessionEvent, committed?: boolean, packedKind?: number): string;
  /** Writes the UTF-8 bytes of the line `encode` would give to `out`: the same line, no string made. */
  encodeInto(out: LineBytes, event: AnySessionEvent, committed?: boolean, packedKind?: number): void;
}

// What \`encode(event, true)\` relies on: an event \`Session.append\` built (what the file writer receives)
// has exactly the members type, seq, time and data, then those of ignorable (only \`true\`), surfaceOp
// and sourceEventSeqs that it carries, in that order. Events parsed from a file need not: they are
// encoded with the envelope checked.
const committedEnvelope = ['type', 'seq', 'time', 'data', 'ignorable', 'surfaceOp', 'sourceEventSeqs'];

/** Format 0's encoder: every event as its full JSON envelope. */
export const fullEnvelopeEncoder: SessionLineEncoder = {
  encode: (event) => `${JSON.stringify(event)}\n`,
  encodeInto: (out, event) => writeEnvelope(out, event),
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
  // Where `encode` writes a line before it becomes a string (made on first use, and small: `encode` is
  // for the cold paths, and an open session keeps its codec).
  #scratch: LineBytes | undefined;

  /** A codec at the start of a log, or (`resume`) going on from a turn or step boundary inside one. */
  constructor(createdAt: number, resume?: CompactLogResumeState) {
    this.#state = new CompactLogState(createdAt, resume);
  }

  /** The seq of the next event. */
  get length(): number {
    return this.#state.seq;
  }

  encode(event: AnySessionEvent, committed = false, packedKind: number = eventEntry): string {
    const out = (this.#scratch ??= new LineBytes(1024, 256));
    out.clear();
    this.encodeInto(out, event, committed, packedKind);
    return out.text();
  }

  encodeInto(
    out: LineBytes,
    event: AnySessionEvent,
    committed = false,
    packedKind: number = eventEntry,
  ): void {
    const start = out.length;
    // A compact form writes only once every check has passed; the cut is for safety, not a path.
    if (!this.#compact(out, event, committed, packedKind)) {
      out.truncate(start);
      writeEnvelope(out, event);
    }
    this.#state.observe(event);
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

  /** Writes the event's compact line and answers true, or writes nothing and answers false. */
  #compact(out: LineBytes, event: AnySessionEvent, committed: boolean, packedKind: number): boolean {
    const time = event.time;
    const dt = time - this.#state.time;
    if (event.seq !== this.#state.seq || this.#state.time + dt !== time || !Number.isFinite(dt)) return false;
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
        if (data.turn === turn && data.step === step) {
          this.#chunkLine(out, data.chunk as Shape, dt, vouched && packedKind !== chunkEntry);
          return true;
        }
        break;
      case 'step/start':
        if (step !== undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, stepKeys))) break;
        if (data.turn === turn && isCount(data.step)) {
          writeHead(out, stepStartPrefix, dt);
          out.number(data.step);
          writeEnd(out);
          return true;
        }
        break;
      case 'step/end':
        if (step === undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, stepKeys))) break;
        if (data.turn === turn && data.step === step) {
          writeZeroLine(out, stepEndPrefix, dt);
          return true;
        }
        break;
      case 'turn/start':
        if (turn !== undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, turnKeys))) break;
        if (data.turn === this.#state.lastTurn + 1) {
          writeZeroLine(out, turnStartPrefix, dt);
          return true;
        }
        break;
      case 'turn/end':
        if (turn === undefined) break;
        if (!vouched && (!isPlainEvent(event, committed) || !hasKeys(data, turnEndKeys))) break;
        if (data.turn === turn) {
          writeHead(out, turnEndPrefix, dt);
          out.raw(`${JSON.stringify(data.reason)}`);
          writeEnd(out);
          return true;
        }
        break;
      case 'assistant/message':
        if (step !== undefined)
          return (
            this.#replyLine(out, event, data, dt, committed) || this.#genericLine(out, event, dt, committed)
          );
        break;
      case 'tool/call':
        if (step !== undefined && isPlainEvent(event, committed))
          return this.#toolCallLine(out, data, dt) || this.#genericLine(out, event, dt, committed);
        break;
      case 'tool/result':
        if (step !== undefined)
          return (
            this.#toolResultLine(out, event, data, dt, committed) ||
            this.#genericLine(out, event, dt, committed)
          );
        break;
      default:
        break;
    }
    return this.#genericLine(out, event, dt, committed);
  }

  /** `vouched`: the log vouched for the chunk's members for its type (`literalChunkKind`'s shapes). */
  #chunkLine(out: LineBytes, chunk: Shape, dt: number, vouched = false): void {
    const chunkType = chunk.type;
    if (
      (chunkType === 'text-delta' || chunkType === 'reasoning-delta') &&
      (vouched || hasKeys(chunk, deltaKeys))
    ) {
      if (
        chunk.index === this.#state.runIndex &&
        this.#state.runStart >= 0 &&
        typeof chunk.text === 'string'
      ) {
        writeHead(out, chunkType === 'text-delta' ? textDeltaPrefix : reasoningDeltaPrefix, dt);
        out.json(chunk.text);
        return writeEnd(out);
      }
    } else if (
      chunkType === 'tool-call-delta' &&
      chunk.index === this.#state.runIndex &&
      this.#state.runStart >= 0
    ) {
      const { id, name, argumentsDelta } = chunk;
      if (hasKeys(chunk, callStartKeys)) {
        writeHead(out, toolCallStartPrefix, dt);
        out.byte(openBracket);
        if (typeof id === 'string' && typeof name === 'string' && typeof argumentsDelta === 'string') {
          out.json(id);
          out.byte(comma);
          out.raw(this.#toolNames.of(name));
          out.byte(comma);
          out.raw(this.#argumentTexts.of(argumentsDelta));
        } else {
          out.raw(`${JSON.stringify(id)},${JSON.stringify(name)},${JSON.stringify(argumentsDelta)}`);
        }
        out.byte(closeBracket);
        return writeEnd(out);
      }
      if (hasKeys(chunk, argumentsDeltaKeys) && typeof argumentsDelta === 'string') {
        writeHead(out, argumentsDeltaPrefix, dt);
        out.json(argumentsDelta);
        return writeEnd(out);
      }
    } else if (
      chunkType === 'block-start' &&
      (vouched || hasKeys(chunk, blockStartKeys)) &&
      isCount(chunk.index)
    ) {
      if (typeof chunk.blockType === 'string') {
        writeHead(out, blockStartPrefix, dt);
        out.byte(openBracket);
        out.number(chunk.index as number);
        out.byte(comma);
        out.raw(this.#blockTypes.of(chunk.blockType));
        out.byte(closeBracket);
        return writeEnd(out);
      }
    } else if (
      chunkType === 'block-end' &&
      (vouched || hasKeys(chunk, blockEndKeys)) &&
      isCount(chunk.index)
    ) {
      if (this.#state.isBuiltBlock(chunk.index as number, chunk.block)) {
        writeHead(out, blockEndPrefix, dt);
        out.number(chunk.index as number);
        return writeEnd(out);
      }
    } else if (chunkType === 'finish' && (vouched || hasKeys(chunk, finishKeys))) {
      const reason = chunk.reason as Shape;
      if ((vouched || hasKeys(reason, kindKeys)) && typeof reason.kind === 'string') {
        writeHead(out, finishPrefix, dt);
        out.raw(this.#finishKinds.of(reason.kind));
        return writeEnd(out);
      }
    }
    writeHead(out, chunkPrefix, dt);
    out.raw(`${JSON.stringify(chunk)}`);
    writeEnd(out);
  }

  // The reply and result lines below prove by construction that the compact form rebuilds the event:
  // exact member names in order, the values the state rebuilds compared member by member, and only the
  // parts the line carries serialized (events are lossless JSON as the session commits them). Each
  // writes only after every check has passed.
  #replyLine(out: LineBytes, event: AnySessionEvent, data: Shape, dt: number, committed: boolean): boolean {
    const run = this.#state.runStart;
    if (run < 0 || !isSourcedEvent(event, committed)) return false;
    if (!isRun(event.sourceEventSeqs, run, event.seq)) return false;
    // One pass over the members: the reply's three, and a fourth only if it is the usage.
    const members = keysWithOptional(data, replyKeys, 'usage');
    if (members < 0) return false;
    const withUsage = members > 0;
    if (data.turn !== this.#state.openTurn || data.step !== this.#state.openStep) return false;
    const message = data.message as Shape;
    if (!hasKeys(message, assistantKeys) || message.role !== 'assistant' || typeof message.id !== 'string')
      return false;
    if (!this.#state.isRunContent(message.content)) return false;
    const same = this.#state.isReplySource(message.source);
    const source = same ? '0' : JSON.stringify(message.source);
    const usage = withUsage ? JSON.stringify(data.usage) : '';
    // A source whose JSON is 0 would read as "the last reply's source": that reply stays generic.
    if (typeof source !== 'string' || (!same && source === '0') || typeof usage !== 'string') return false;
    writeHead(out, replyPrefix, dt);
    out.byte(openBracket);
    out.json(message.id);
    out.byte(comma);
    out.raw(source);
    if (withUsage) {
      out.byte(comma);
      out.raw(usage);
    }
    out.byte(closeBracket);
    writeEnd(out);
    return true;
  }

  #toolCallLine(out: LineBytes, data: Shape, dt: number): boolean {
    if (
      !hasKeys(data, toolCallKeys) ||
      data.turn !== this.#state.openTurn ||
      data.step !== this.#state.openStep
    )
      return false;
    const count = this.#state.callCount;
    for (let position = 0; position < count; position++) {
      const call = this.#state.callBlock(position)!;
      if (call.id === data.callId && call.name === data.name && call.arguments === data.arguments) {
        if (typeof call.arguments !== 'string') return false;
        writeHead(out, toolCallPrefix, dt);
        out.number(position);
        writeEnd(out);
        return true;
      }
    }
    return false;
  }

  #toolResultLine(
    out: LineBytes,
    event: AnySessionEvent,
    data: Shape,
    dt: number,
    committed: boolean,
  ): boolean {
    if (!isSourcedEvent(event, committed)) return false;
    const sources = event.sourceEventSeqs!;
    if (!Array.isArray(sources) || sources.length !== 1) return false;
    const callSeq = sources[0]!;
    const callId = this.#state.stepCallId(callSeq);
    const dataMembers = keysWithOptional(data, toolResultKeys, 'error');
    const withError = dataMembers > 0;
    if (callId === undefined || dataMembers < 0) return false;
    if (data.turn !== this.#state.openTurn || data.step !== this.#state.openStep) return false;
    const message = data.message as Shape;
    if (!hasKeys(message, messageKeys) || typeof message.id !== 'string' || message.role !== 'user')
      return false;
    const origin = message.source as Shape;
    if (!hasKeys(origin, toolSourceKeys) || origin.kind !== 'tool' || origin.callId !== callId) return false;
    const blocks = message.content;
    if (!Array.isArray(blocks) || blocks.length !== 1) return false;
    const block = blocks[0] as Shape;
    const blockMembers = keysWithOptional(block, resultBlockKeys, 'isError');
    const isError = blockMembers > 0;
    if (blockMembers < 0) return false;
    if (block.type !== 'tool-result' || block.toolCallId !== callId || (isError && block.isError !== true))
      return false;
    const textOnly = isTextContent(block.content);
    const content = textOnly ? '' : JSON.stringify(block.content);
    const error = withError ? JSON.stringify(data.error) : '';
    if (typeof content !== 'string' || typeof error !== 'string') return false;
    writeHead(out, toolResultPrefix, dt);
    out.byte(openBracket);
    out.number(event.seq - callSeq);
    out.byte(comma);
    out.json(message.id);
    out.byte(comma);
    if (textOnly) writeTextContent(out, block.content as Shape[]);
    else out.raw(content);
    out.raw(isError ? ',1' : ',0');
    if (withError) {
      out.byte(comma);
      out.raw(error);
    }
    out.byte(closeBracket);
    writeEnd(out);
    return true;
  }

  #genericLine(out: LineBytes, event: AnySessionEvent, dt: number, committed: boolean): boolean {
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
      return false;
    out.raw(`[${JSON.stringify(event.type)},`);
    out.number(dt);
    out.byte(comma);
    out.raw(`${JSON.stringify(event.data)}`);
    if (extras !== '') out.raw(`,{${extras.slice(0, -1)}}`);
    writeEnd(out);
    return true;
  }
}

/** Writes an event as its full JSON envelope line. */
function writeEnvelope(out: LineBytes, event: AnySessionEvent): void {
  out.raw(JSON.stringify(event));
  out.byte(newline);
}

/** Writes a compact line's kind prefix and time delta, up to the comma before its data. */
function writeHead(out: LineBytes, prefix: string, dt: number): void {
  out.head(prefix, dt, comma);
}

/** Closes a compact line: its bracket and newline. */
function writeEnd(out: LineBytes): void {
  out.byte(closeBracket);
  out.byte(newline);
}

/** Writes a whole compact line whose data is 0. */
function writeZeroLine(out: LineBytes, prefix: string, dt: number): void {
  writeHead(out, prefix, dt);
  out.byte(0x30);
  writeEnd(out);
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

/** True when `content` is made only of text blocks (what most tools answer), each exactly type and text. */
function isTextContent(content: unknown): content is Shape[] {
  if (!Array.isArray(content)) return false;
  for (let position = 0; position < content.length; position++) {
    const block = content[position] as Shape;
    if (!hasKeys(block, textBlockKeys) || block.type !== 'text' || typeof block.text !== 'string')
      return false;
  }
  return true;
}

/** Writes the JSON of content that `isTextContent` accepted, built from its texts. */
function writeTextContent(out: LineBytes, content: readonly Shape[]): void {
  out.byte(openBracket);
  for (let position = 0; position < content.length; position++) {
    out.raw(position === 0 ? '{"type":"text","text":' : ',{"type":"text","text":');
    out.json(content[position]!.text as string);
    out.byte(0x7d);
  }
  out.byte(closeBracket);
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
