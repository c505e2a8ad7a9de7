import type { ContentBlock } from './message.ts';
import type { FinishReason, StreamChunk, TokenUsage } from './stream-chunk.ts';
import { TextAccumulator } from './text-accumulator.ts';

interface PartialBlock {
  blockType: ContentBlock['type'] | undefined;
  text: TextAccumulator | undefined;
  id: string | undefined;
  name: string;
  argumentsText: TextAccumulator | undefined;
  closed: ContentBlock | undefined;
}

/** What a finished stream assembled to. */
export interface AssembledResponse {
  content: ContentBlock[];
  finish: FinishReason;
  usage: TokenUsage | undefined;
  replayState: unknown;
}

/**
 * Assembles stream chunks into content blocks keyed by `index` in first-seen order; the first
 * `block-end` of an index is authoritative, the last `usage` wins, and a missing finish means `stop`.
 */
export class BlockAssembler {
  readonly #blocks = new Map<number, PartialBlock>();
  #usage: TokenUsage | undefined;
  #finish: FinishReason | undefined;
  #replayState: unknown;

  /** Feeds one chunk. */
  push(chunk: StreamChunk): void {
    switch (chunk.type) {
      case 'block-start': {
        const block = this.#partial(chunk.index);
        block.blockType ??= chunk.blockType;
        return;
      }
      case 'text-delta': {
        const block = this.#partial(chunk.index);
        if (block.closed !== undefined) return;
        block.blockType ??= 'text';
        (block.text ??= new TextAccumulator()).push(chunk.text);
        return;
      }
      case 'reasoning-delta': {
        const block = this.#partial(chunk.index);
        if (block.closed !== undefined) return;
        block.blockType ??= 'reasoning';
        (block.text ??= new TextAccumulator()).push(chunk.text);
        return;
      }
      case 'tool-call-delta': {
        const block = this.#partial(chunk.index);
        if (block.closed !== undefined) return;
        block.blockType ??= 'tool-call';
        if (chunk.id !== '') block.id ??= chunk.id;
        if (chunk.name !== undefined && chunk.name !== '') block.name ||= chunk.name;
        (block.argumentsText ??= new TextAccumulator()).push(chunk.argumentsDelta);
        return;
      }
      case 'block-end': {
        const block = this.#partial(chunk.index);
        block.blockType ??= chunk.block.type;
        block.closed ??= chunk.block;
        return;
      }
      case 'usage':
        this.#usage = chunk.usage;
        return;
      case 'finish':
        this.#finish = chunk.reason;
        this.#replayState = chunk.replayState;
        return;
    }
  }

  /** The finish reason seen so far, if any. */
  get finish(): FinishReason | undefined {
    return this.#finish;
  }

  /** The assembled response; on `max-tokens` every tool-call block is dropped. */
  result(): AssembledResponse {
    const finish = this.#finish ?? { kind: 'stop' };
    const content: ContentBlock[] = [];
    const keptPositions: boolean[] = [];
    const callIds = new Set<string>();
    for (const [index, partial] of this.#blocks) {
      const block = uniqueCallId(partial.closed ?? assembleOpen(index, partial), index, callIds);
      if (block === undefined) {
        keptPositions.push(false);
        continue;
      }
      const keep = !(finish.kind === 'max-tokens' && block.type === 'tool-call');
      keptPositions.push(keep);
      if (keep) content.push(block);
    }
    return {
      content,
      finish,
      usage: this.#usage,
      replayState: pruneReplayState(this.#replayState, keptPositions, finish.kind === 'max-tokens'),
    };
  }

  /** The text and reasoning blocks with non-whitespace text, for an assistant message cut by cancellation. */
  interruptedPrefix(): ContentBlock[] {
    const prefix: ContentBlock[] = [];
    for (const [index, partial] of this.#blocks) {
      const block = partial.closed ?? assembleOpen(index, partial);
      if (block === undefined) continue;
      if ((block.type === 'text' || block.type === 'reasoning') && block.text.trim() !== '')
        prefix.push(block);
    }
    return prefix;
  }

  /** The usage reported so far. */
  get usage(): TokenUsage | undefined {
    return this.#usage;
  }

  #partial(index: number): PartialBlock {
    let block = this.#blocks.get(index);
    if (block === undefined) {
      block = {
        blockType: undefined,
        text: undefined,
        id: undefined,
        name: '',
        argumentsText: undefined,
        closed: undefined,
      };
      this.#blocks.set(index, block);
    }
    return block;
  }
}

/**
 * A tool call needs an id no other call of its message has, so that exactly one result answers it: an
 * empty or repeated id becomes `call-<index>` (the name and arguments stay as the model sent them).
 */
function uniqueCallId(
  block: ContentBlock | undefined,
  index: number,
  used: Set<string>,
): ContentBlock | undefined {
  if (block?.type !== 'tool-call') return block;
  let id = block.id;
  if (id === '' || used.has(id)) {
    id = `call-${index}`;
    for (let suffix = 1; used.has(id); suffix++) id = `call-${index}-${suffix}`;
  }
  used.add(id);
  return id === block.id ? block : { ...block, id };
}

function assembleOpen(index: number, partial: PartialBlock): ContentBlock | undefined {
  switch (partial.blockType) {
    case 'text':
      return { type: 'text', text: partial.text?.toString() ?? '' };
    case 'reasoning':
      return { type: 'reasoning', text: partial.text?.toString() ?? '' };
    case 'tool-call':
      return {
        type: 'tool-call',
        id: partial.id ?? `call-${index}`,
        name: partial.name,
        arguments: partial.argumentsText?.toString() ?? '',
      };
    case 'image':
    case 'tool-result':
    case undefined:
      return undefined;
  }
}

function pruneReplayState(state: unknown, kept: boolean[], pruning: boolean): unknown {
  if (!pruning || typeof state !== 'object' || state === null) return state;
  const blocks = (state as { blocks?: unknown }).blocks;
  if (!Array.isArray(blocks)) return state;
  if (blocks.length !== kept.length) return undefined;
  return { ...(state as object), blocks: blocks.filter((_, position) => kept[position] === true) };
}
