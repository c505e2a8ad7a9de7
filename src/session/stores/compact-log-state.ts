import type { AnySessionEvent } from '../session-event.ts';
import { BlockBuilds } from './block-builds.ts';

export type { BlockBuild } from './block-builds.ts';

/** A tool-call block of the last reply, as a `tool/call` repeats it. */
export interface CallBlock {
  id: unknown;
  name: unknown;
  arguments: unknown;
}

/** A JSON object. */
export type Shape = Record<string, unknown>;

/**
 * The part of the shared state that a reader needs to go on decoding at a `turn/start` or `step/start`
 * line, or after the last `turn/end`: there no chunk run, reply calls or step calls are in force yet.
 */
export interface CompactLogResumeState {
  /** The seq of the next line. */
  seq: number;
  /** The time of the event before it (the header's `createdAt` before the first). */
  time: number;
  lastTurn: number;
  openTurn: number | undefined;
  openStep: number | undefined;
  /** The JSON of the last reply's source ('' before any). */
  replySource: string;
}

/**
 * What format 1's encoder and decoder both know after the same events: the previous time, the next
 * seq, the open turn and step, what the current chunk run built, the last reply's tool calls and the
 * step's `tool/call` seqs. Updated from each whole event by `observe`, the same on both sides.
 */
export class CompactLogState {
  seq = 0;
  time: number;
  lastTurn = 0;
  openTurn: number | undefined;
  openStep: number | undefined;
  // The unbroken run of chunk events ending at the last event (-1 when the last event was no chunk).
  runStart = -1;
  runIndex: unknown;
  readonly builds = new BlockBuilds();
  // The run's block-end blocks and the last reply's source are kept as values: the encoder compares
  // them by shape, so their JSON is made only when the decoder asks for it.
  // The arrays below are filled up to a count and reused, never truncated: truncating an array to
  // length 0 drops its backing store, which the next push allocates again (once per step).
  readonly #runBlockValues: unknown[] = [];
  #runBlockCount = 0;
  #replySourceValue: unknown;
  #replySourceJson: string | undefined = '';
  // The tool-call blocks of the last reply (the blocks themselves: events are immutable).
  readonly #callBlocks: (CallBlock | undefined)[] = [];
  #callBlockCount = 0;
  // The step's `tool/call` seqs (ascending) and call ids, as parallel arrays.
  readonly #callSeqs: number[] = [];
  readonly #callIds: string[] = [];
  #stepCallCount = 0;

  constructor(createdAt: number, resume?: CompactLogResumeState) {
    this.time = createdAt;
    if (resume === undefined) return;
    this.seq = resume.seq;
    this.time = resume.time;
    this.lastTurn = resume.lastTurn;
    this.openTurn = resume.openTurn;
    this.openStep = resume.openStep;
    // The saved JSON of the last reply's source: its value, for the encoder's comparisons by shape.
    this.#replySourceJson = resume.replySource;
    this.#replySourceValue =
      resume.replySource === '' ? undefined : (JSON.parse(resume.replySource) as unknown);
  }

  /** The call id of the step's `tool/call` at `seq`, or undefined when there is none. */
  stepCallId(seq: number): string | undefined {
    const seqs = this.#callSeqs;
    // Results follow their calls: the search starts from the latest call.
    for (let position = this.#stepCallCount - 1; position >= 0; position--)
      if (seqs[position] === seq) return this.#callIds[position];
    return undefined;
  }

  /** The JSON of each block-end block of the current chunk run, in order. */
  get runBlocks(): string[] {
    const blocks: string[] = [];
    for (let position = 0; position < this.#runBlockCount; position++)
      blocks.push(JSON.stringify(this.#runBlockValues[position]));
    return blocks;
  }

  /** How many tool-call blocks the last reply has. */
  get callCount(): number {
    return this.#callBlockCount;
  }

  /** The last reply's tool-call block at `position` among its calls, if there is one. */
  callBlock(position: number): CallBlock | undefined {
    return position < this.#callBlockCount ? this.#callBlocks[position] : undefined;
  }

  /** The JSON of the last reply's source ('' before any reply). */
  get replySource(): string {
    this.#replySourceJson ??= JSON.stringify(this.#replySourceValue) ?? '';
    return this.#replySourceJson;
  }

  /** True when `source` has exactly the JSON of the last reply's source (and there was one). */
  isReplySource(source: unknown): boolean {
    // Before any reply the value is undefined, which nothing matches.
    return sameJson(source, this.#replySourceValue);
  }

  /** True when `content` has exactly the JSON of the run's block-end blocks, as a reply repeats them. */
  isRunContent(content: unknown): boolean {
    const blocks = this.#runBlockValues;
    if (!Array.isArray(content) || content.length !== this.#runBlockCount) return false;
    for (let position = 0; position < content.length; position++)
      if (!sameJson(content[position], blocks[position])) return false;
    return true;
  }

  /**
   * True when `block` has exactly the JSON of the block the run's deltas of this index built (what
   * `builtBlockValue` rebuilds), checked member by member instead of by serializing both.
   */
  isBuiltBlock(index: number, block: unknown): boolean {
    const build = this.builds.get(index);
    if (build === undefined || this.runStart < 0) return false;
    const shape = block as Shape;
    if (build.kind === 'tool-call')
      return (
        typeof build.id === 'string' &&
        typeof build.name === 'string' &&
        hasKeys(shape, toolCallBlockKeys) &&
        shape.type === 'tool-call' &&
        shape.id === build.id &&
        shape.name === build.name &&
        shape.arguments === build.text
      );
    return hasKeys(shape, textBlockKeys) && shape.type === build.kind && shape.text === build.text;
  }

  /** The block that the run's deltas of this index built (a fresh object), if they built one. */
  builtBlockValue(index: number): Shape | undefined {
    const build = this.builds.get(index);
    if (build === undefined || this.runStart < 0) return undefined;
    if (build.kind === 'tool-call') {
      if (typeof build.id !== 'string' || typeof build.name !== 'string') return undefined;
      return { type: 'tool-call', id: build.id, name: build.name, arguments: build.text };
    }
    return { type: build.kind, text: build.text };
  }

  /** Advances the shared state past a whole event (the same on both sides). */
  observe(event: AnySessionEvent): void {
    this.seq = event.seq + 1;
    this.time = event.time;
    const type = event.type;
    const data = event.data as Shape;
    if (type !== 'assistant/chunk' && this.runStart >= 0) {
      this.runStart = -1;
      this.runIndex = undefined;
      // Clearing a Map allocates a fresh table: a run whose blocks all ended left it empty already.
      if (this.builds.size > 0) this.builds.clear();
    }
    switch (type) {
      case 'assistant/chunk':
        this.#observeChunk(event.seq, data);
        return;
      case 'turn/start':
        if (isCount(data?.turn)) {
          this.openTurn = data.turn;
          this.lastTurn = Math.max(this.lastTurn, data.turn);
        }
        this.openStep = undefined;
        return;
      case 'turn/end':
        this.openTurn = undefined;
        this.openStep = undefined;
        return;
      case 'step/start':
        this.openStep = this.openTurn !== undefined && isCount(data?.step) ? data.step : undefined;
        this.#clearCallBlocks();
        this.#stepCallCount = 0;
        return;
      case 'step/end':
        this.openStep = undefined;
        return;
      case 'assistant/message':
        this.#observeReply(data);
        return;
      case 'tool/call':
        if (typeof data?.callId === 'string') {
          this.#callSeqs[this.#stepCallCount] = event.seq;
          this.#callIds[this.#stepCallCount] = data.callId;
          this.#stepCallCount++;
        }
        return;
      default:
        return;
    }
  }

  #observeChunk(seq: number, data: Shape): void {
    if (this.runStart < 0) {
      this.runStart = seq;
      this.runIndex = undefined;
      if (this.builds.size > 0) this.builds.clear();
      for (let position = 0; position < this.#runBlockCount; position++)
        this.#runBlockValues[position] = undefined;
      this.#runBlockCount = 0;
    }
    const chunk = data?.chunk as Shape | undefined;
    if (!isShape(chunk)) return;
    // Events are JSON data (no member is undefined), so a member read as undefined is absent.
    const index = chunk.index;
    if (index !== undefined) this.runIndex = index;
    if (!isCount(index)) return;
    switch (chunk.type) {
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = chunk.type === 'text-delta' ? 'text' : 'reasoning';
        const build = this.builds.get(index);
        if (typeof chunk.text !== 'string') this.builds.delete(index);
        else if (build === undefined)
          this.builds.set(index, { kind, text: chunk.text, id: undefined, name: undefined });
        else if (build.kind === kind) build.text += chunk.text;
        else this.builds.delete(index);
        return;
      }
      case 'tool-call-delta': {
        let build = this.builds.get(index);
        if (build === undefined) {
          build = { kind: 'tool-call', text: '', id: undefined, name: undefined };
          this.builds.set(index, build);
        } else if (build.kind !== 'tool-call') {
          this.builds.delete(index);
          return;
        }
        if (chunk.id !== undefined) build.id = chunk.id;
        if (chunk.name !== undefined) build.name = chunk.name;
        if (typeof chunk.argumentsDelta === 'string') build.text += chunk.argumentsDelta;
        return;
      }
      case 'block-end':
        this.builds.delete(index);
        this.#runBlockValues[this.#runBlockCount++] = chunk.block;
        return;
      default:
        return;
    }
  }

  #observeReply(data: Shape): void {
    const message = data?.message as Shape | undefined;
    if (!isShape(message)) return;
    this.#replySourceValue = message.source;
    this.#replySourceJson = undefined;
    this.#clearCallBlocks();
    // The blocks themselves, not copies: events are immutable once committed or decoded.
    if (Array.isArray(message.content)) {
      for (const block of message.content as Shape[])
        if (isShape(block) && block.type === 'tool-call')
          this.#callBlocks[this.#callBlockCount++] = block as unknown as CallBlock;
    }
  }

  #clearCallBlocks(): void {
    // Emptied, not truncated, so the slots keep no block of an earlier reply alive.
    for (let position = 0; position < this.#callBlockCount; position++)
      this.#callBlocks[position] = undefined;
    this.#callBlockCount = 0;
  }
}

/** True when `value` is an object whose own keys are exactly `keys`, in that order. */
export function hasKeys(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  let position = 0;
  for (const key in value) {
    if (key !== keys[position]) return false;
    position++;
  }
  return position === keys.length;
}

const toolCallBlockKeys = ['type', 'id', 'name', 'arguments'];
const textBlockKeys = ['type', 'text'];

/**
 * True only when `left` and `right` serialize to the same JSON text (false when unsure): the same
 * object or array, or plain JSON data (strings, finite numbers, booleans, null, arrays and objects
 * without `toJSON`, members in the same order) that is equal member by member.
 */
export function sameJson(left: unknown, right: unknown): boolean {
  if (typeof left !== 'object' || left === null) {
    if (typeof left === 'number') return left === right && Number.isFinite(left);
    return (typeof left === 'string' || typeof left === 'boolean' || left === null) && left === right;
  }
  // The same object serializes the same (the objects compared are JSON data: no impure toJSON).
  if (left === right) return true;
  if (typeof right !== 'object' || right === null) return false;
  if (typeof (left as Shape).toJSON === 'function' || typeof (right as Shape).toJSON === 'function')
    return false;
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) if (!sameJson(left[index], right[index])) return false;
    return true;
  }
  if (Array.isArray(right)) return false;
  // One key array, not two: the left side's keys are walked in place.
  const rightKeys = Object.keys(right);
  let position = 0;
  for (const key in left) {
    if (rightKeys[position] !== key || !sameJson((left as Shape)[key], (right as Shape)[key])) return false;
    position++;
  }
  return position === rightKeys.length;
}

// A character JSON.stringify escapes: a quote, a backslash, a control character, or a surrogate (which
// it escapes when it stands alone; a pair is left to it too).
const escapedCharacter = /["\\\u0000-\u001f\ud800-\udfff]/;

/** True when `JSON.stringify(text)` is more than `text` between quotes (something in it is escaped). */
export function needsEscape(text: string): boolean {
  return escapedCharacter.test(text);
}

/** `JSON.stringify(text)`, quoted directly when nothing in it needs escaping (the common case). */
export function jsonString(text: string): string {
  return escapedCharacter.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** True for a JSON object (not an array, not null). */
export function isShape(value: unknown): value is Shape {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a non-negative safe integer. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** True when `sources` are exactly the seqs from `start` up to `end`. */
export function isRun(sources: readonly number[] | undefined, start: number, end: number): boolean {
  if (!Array.isArray(sources) || sources.length !== end - start) return false;
  for (let position = 0; position < sources.length; position++)
    if (sources[position] !== start + position) return false;
  return true;
}
