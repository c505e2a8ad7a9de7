import type { AnySessionEvent } from '../session-event.ts';
import { isCount, isShape } from './compact-log-state.ts';
import type { CompactLogState, Shape } from './compact-log-state.ts';
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
  toolCallStartKind,
  argumentsDeltaKind,
  kindCount,
} from './compact-line-kinds.ts';
import { expandTypedLine } from './typed-log-line.ts';

// Format 1's decoding side: a parsed compact line back to the event it was written from, with what the
// codec's state knows (the open turn and step, the current chunk run, the step's calls). The codec
// observes each decoded event afterwards, exactly as after encoding one.

/**
 * The event of one parsed compact line (`[kind, dt, data]` or `[type, dt, data, extras]`) given the
 * state after the lines before it, or a string saying why the line is not a valid record.
 */
export function expandCompactLine(state: CompactLogState, line: unknown[]): AnySessionEvent | string {
  const kind = line[0];
  const dt = line[1];
  const data = line[2];
  if (typeof dt !== 'number' || !Number.isFinite(dt)) return 'the record has no valid time delta';
  if (line.length < 3) return 'the record has no data';
  const seq = state.seq;
  const time = state.time + dt;
  if (typeof kind === 'string') return expandTypedLine(line, seq, time);
  if (!isCount(kind) || kind >= kindCount || line.length !== 3) return 'the record has an unknown kind';
  const step = state.openStep;
  const turn = state.openTurn;
  if (kind <= finishKind || kind === toolCallStartKind || kind === argumentsDeltaKind) {
    if (step === undefined) return 'a chunk record outside a step';
    const chunk = expandChunk(state, kind, data);
    if (typeof chunk === 'string') return chunk;
    return { type: 'assistant/chunk', seq, time, data: { turn, step, chunk } } as AnySessionEvent;
  }
  switch (kind) {
    case stepStartKind:
      if (turn === undefined || step !== undefined || !isCount(data)) return 'a step start outside a turn';
      return { type: 'step/start', seq, time, data: { turn, step: data } } as AnySessionEvent;
    case stepEndKind:
      if (step === undefined) return 'a step end outside a step';
      return { type: 'step/end', seq, time, data: { turn, step } } as AnySessionEvent;
    case turnStartKind:
      if (turn !== undefined) return 'a turn start inside a turn';
      return { type: 'turn/start', seq, time, data: { turn: state.lastTurn + 1 } } as AnySessionEvent;
    case turnEndKind:
      if (turn === undefined) return 'a turn end outside a turn';
      return { type: 'turn/end', seq, time, data: { turn, reason: data } } as AnySessionEvent;
    default:
      if (step === undefined) return 'a step record outside a step';
      return expandStepRecord(state, kind, data, seq, time);
  }
}

function expandChunk(state: CompactLogState, kind: number, data: unknown): Shape | string {
  switch (kind) {
    case chunkKind:
      return isShape(data) ? data : 'the chunk is not an object';
    case textDeltaKind:
    case reasoningDeltaKind:
      if (typeof data !== 'string' || state.runStart < 0) return 'a delta without a block';
      return {
        type: kind === textDeltaKind ? 'text-delta' : 'reasoning-delta',
        index: state.runIndex,
        text: data,
      };
    case blockStartKind:
      if (!Array.isArray(data) || data.length !== 2 || !isCount(data[0]) || typeof data[1] !== 'string')
        return 'a bad block start';
      return { type: 'block-start', index: data[0], blockType: data[1] };
    case blockEndKind: {
      const block = isCount(data) ? state.builtBlockValue(data) : undefined;
      if (block === undefined) return 'a block end without its deltas';
      return { type: 'block-end', index: data, block };
    }
    case toolCallStartKind:
      if (!Array.isArray(data) || data.length !== 3 || state.runStart < 0) return 'a bad tool-call delta';
      return {
        type: 'tool-call-delta',
        index: state.runIndex,
        id: data[0],
        name: data[1],
        argumentsDelta: data[2],
      };
    case argumentsDeltaKind:
      if (typeof data !== 'string' || state.runStart < 0) return 'a bad arguments delta';
      return { type: 'tool-call-delta', index: state.runIndex, argumentsDelta: data };
    default:
      if (typeof data !== 'string') return 'a bad finish reason';
      return { type: 'finish', reason: { kind: data } };
  }
}

function expandStepRecord(
  state: CompactLogState,
  kind: number,
  data: unknown,
  seq: number,
  time: number,
): AnySessionEvent | string {
  const turn = state.openTurn!;
  const step = state.openStep!;
  if (kind === toolCallKind) {
    const call = isCount(data) ? state.callBlock(data) : undefined;
    if (call === undefined) return 'a tool call without its block';
    const callData = { turn, step, callId: call.id, name: call.name, arguments: call.arguments };
    return { type: 'tool/call', seq, time, data: callData } as AnySessionEvent;
  }
  if (!Array.isArray(data)) return 'a bad step record';
  if (kind === replyKind) {
    const [id, source, usage] = data as unknown[];
    if (state.runStart < 0 || typeof id !== 'string' || data.length < 2 || data.length > 3)
      return 'a bad reply';
    if (source === 0 && state.replySource === '') return 'a reply without an earlier source';
    const message = {
      id,
      role: 'assistant',
      content: JSON.parse(`[${state.runBlocks.join(',')}]`) as unknown,
      source: source === 0 ? (JSON.parse(state.replySource) as unknown) : source,
    };
    const replyData: Shape = { turn, step, message };
    if (data.length === 3) replyData.usage = usage;
    const sources: number[] = [];
    for (let source = state.runStart; source < seq; source++) sources.push(source);
    return {
      type: 'assistant/message',
      seq,
      time,
      data: replyData,
      surfaceOp: 'append',
      sourceEventSeqs: sources,
    } as AnySessionEvent;
  }
  const [back, id, content, isError, error] = data as unknown[];
  const callSeq = seq - (back as number);
  const callId = isCount(back) ? state.stepCallId(callSeq) : undefined;
  if (
    callId === undefined ||
    typeof id !== 'string' ||
    (isError !== 0 && isError !== 1) ||
    data.length < 4 ||
    data.length > 5
  )
    return 'a bad tool result';
  const block: Shape = { type: 'tool-result', toolCallId: callId, content };
  if (isError === 1) block.isError = true;
  const resultData: Shape = {
    turn,
    step,
    message: { id, role: 'user', content: [block], source: { kind: 'tool', callId } },
  };
  if (data.length === 5) resultData.error = error;
  return {
    type: 'tool/result',
    seq,
    time,
    data: resultData,
    surfaceOp: 'append',
    sourceEventSeqs: [callSeq],
  } as AnySessionEvent;
}
