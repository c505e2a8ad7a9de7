import type { Message } from '../llm/index.ts';
import { freezeImageFree, hasImages } from '../llm/index.ts';
import type { AnySessionEvent } from './session-event.ts';
import { surfaceEventTypes } from './session-event.ts';
import { SessionError } from './session-error.ts';
import type { ReadonlySessionLog } from './session-log.ts';

/**
 * The model-visible surface: the ordered seqs of message events, its replacement generation, and the
 * incrementally derived history (extended per new node, rebuilt only when the generation changes).
 */
export class Surface {
  readonly #nodes: number[] = [];
  readonly #position = new Map<number, number>();
  #positionsValid = true;
  #generation = 0;
  #derived: Message[] = [];
  #derivedNodes = 0;
  #derivedGeneration = 0;
  // How many of the derived messages carry an image block (counted once per message as it is derived).
  #derivedImages = 0;
  #snapshot: readonly Message[] | undefined;
  readonly #log: ReadonlySessionLog;

  constructor(log: ReadonlySessionLog) {
    this.#log = log;
  }

  /** The surface replacement generation: the count of committed replacements. */
  get replaceGeneration(): number {
    return this.#generation;
  }

  /** The seqs currently on the surface, in order. */
  get nodes(): readonly number[] {
    return this.#nodes;
  }

  /**
   * Starts from a surface saved at a resume point (the seqs on it, in order, and its generation) instead
   * of from nothing; only before any event was applied.
   */
  restore(nodes: readonly number[], generation: number): void {
    for (const node of nodes) this.#nodes.push(node);
    this.#positionsValid = false;
    this.#generation = generation;
    this.#derivedGeneration = generation;
    this.#snapshot = undefined;
  }

  /** Throws SessionError when the candidate's surface metadata is invalid; changes nothing. */
  check(event: AnySessionEvent): void {
    const isSurfaceType = surfaceEventTypes.has(event.type);
    if (!isSurfaceType) {
      if (event.surfaceOp !== undefined || event.sourceEventSeqs !== undefined) {
        this.#fail(event, 'surfaceOp and sourceEventSeqs are allowed only on surface events');
      }
      return;
    }
    if (event.surfaceOp === undefined) this.#fail(event, 'surface events need a surfaceOp');
    const sources = event.sourceEventSeqs;
    if (sources !== undefined) {
      if (sources.length === 0 && event.type !== 'assistant/message')
        this.#fail(event, 'empty sourceEventSeqs');
      // Sources in increasing order (as the loop writes them) cannot repeat: no set is needed.
      let previous = -1;
      let seen: Set<number> | undefined;
      for (let position = 0; position < sources.length; position++) {
        const seq = sources[position]!;
        if (!Number.isInteger(seq) || seq < 0 || seq >= event.seq)
          this.#fail(event, `source ${seq} is not earlier`);
        if (seen === undefined && seq > previous) {
          previous = seq;
          continue;
        }
        seen ??= new Set(sources.slice(0, position));
        if (seen.has(seq)) this.#fail(event, `duplicate source ${seq}`);
        seen.add(seq);
      }
    }
    const op = event.surfaceOp;
    if (op === 'append') return;
    if (typeof op !== 'object' || op === null || op.op !== 'replace') this.#fail(event, 'unknown surfaceOp');
    const start = this.#positionOf(op.start);
    const end = this.#positionOf(op.end);
    if (start === undefined || end === undefined) this.#fail(event, 'replace range is not on the surface');
    if (start > end) this.#fail(event, 'replace start comes after its end');
    const sourceSet = new Set(sources ?? []);
    for (let position = start; position <= end; position++) {
      if (!sourceSet.has(this.#nodes[position]!))
        this.#fail(event, 'sources must include every shadowed node');
    }
    if (event.type === 'tool/result') {
      if (start !== end) this.#fail(event, 'a replacing tool/result shadows exactly one node');
      const shadowed = this.#log.at(this.#nodes[start]!);
      if (shadowed?.type !== 'tool/result')
        this.#fail(event, 'a replacing tool/result must shadow a tool/result');
      if (!sameExceptContent(shadowed.data, event.data)) {
        this.#fail(event, 'a replacing tool/result may differ only in its result content');
      }
    }
  }

  /** Applies an accepted surface event. */
  apply(event: AnySessionEvent): void {
    const op = event.surfaceOp;
    if (op === undefined) return;
    this.#snapshot = undefined;
    if (op === 'append') {
      if (this.#positionsValid) this.#position.set(event.seq, this.#nodes.length);
      this.#nodes.push(event.seq);
      return;
    }
    const start = this.#positionOf(op.start)!;
    const end = this.#positionOf(op.end)!;
    this.#nodes.splice(start, end - start + 1, event.seq);
    this.#positionsValid = false;
    this.#generation++;
  }

  /** The model history: a fresh array of the shared frozen messages on the surface. */
  deriveMessages(): Message[] {
    return this.derivedView().slice();
  }

  /** The derived history as one shared frozen array, reused until the surface changes. */
  derivedView(): readonly Message[] {
    if (this.#snapshot !== undefined) return this.#snapshot;
    if (this.#derivedGeneration !== this.#generation) {
      this.#derived = [];
      this.#derivedNodes = 0;
      this.#derivedImages = 0;
      this.#derivedGeneration = this.#generation;
    }
    for (; this.#derivedNodes < this.#nodes.length; this.#derivedNodes++) {
      const seq = this.#nodes[this.#derivedNodes]!;
      // Type and data only: a message event is not rebuilt whole (its sources can be long).
      const type = this.#log.typeAt(seq);
      if (type === undefined) continue;
      const message = visibleMessageOf(type, this.#log.dataAt(seq));
      if (message === undefined) continue;
      this.#derived.push(message);
      if (hasImages(message.content)) this.#derivedImages++;
    }
    const copy = this.#derived.slice();
    const snapshot = this.#derivedImages === 0 ? freezeImageFree(copy) : Object.freeze(copy);
    this.#snapshot = snapshot;
    return snapshot;
  }

  #positionOf(seq: number): number | undefined {
    if (!this.#positionsValid) {
      this.#position.clear();
      this.#nodes.forEach((node, index) => this.#position.set(node, index));
      this.#positionsValid = true;
    }
    return this.#position.get(seq);
  }

  #fail(event: AnySessionEvent, reason: string): never {
    throw new SessionError('SURFACE_VIOLATION', `${event.type} rejected: ${reason}`);
  }
}

/** The message a surface event shows the model: none for non-message events and empty assistant anchors. */
export function modelVisibleMessage(event: AnySessionEvent): Message | undefined {
  return visibleMessageOf(event.type, event.data);
}

function visibleMessageOf(type: string, data: unknown): Message | undefined {
  switch (type) {
    case 'user/message':
      return data as Message;
    case 'assistant/message': {
      const message = (data as { message: Message }).message;
      return message.content.length === 0 ? undefined : message;
    }
    case 'tool/result':
      return (data as { message: Message }).message;
    default:
      return undefined;
  }
}

function sameExceptContent(before: unknown, after: unknown): boolean {
  const strip = (data: unknown): string => {
    const { message, ...rest } = data as { message: Message };
    const block = message.content[0] as { content?: unknown } | undefined;
    const { content: _content, ...blockRest } = (block ?? {}) as Record<string, unknown>;
    const { content: _messageContent, ...messageRest } = message as unknown as Record<string, unknown>;
    return JSON.stringify([rest, messageRest, blockRest, message.content.length]);
  };
  return strip(before) === strip(after);
}
