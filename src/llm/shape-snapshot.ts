import { snapshotAt } from './lossless-json.ts';
import type { ContentBlock } from './message.ts';
import type { StreamChunk, TokenUsage } from './stream-chunk.ts';

// Typed snapshots of the shapes a step carries most: each checks that a value is a plain, unfrozen object
// whose enumerable keys are exactly the expected ones in the expected order, with valid primitive members,
// and builds the frozen copy as one literal; for anything else it answers undefined and the caller takes
// `snapshotAt`'s general walk, which copies, shares or rejects exactly as before. The copy is the one the
// walk would make: the same keys in the same order, the same values, frozen at every level. A frozen
// input falls back because the walk shares a remembered snapshot instead of copying it.

/**
 * Snapshots a stream chunk as `snapshotAt(chunk, prefix, suffix, 'none')` does (same result, same errors),
 * through a literal for the common shapes.
 */
export function snapshotChunk(chunk: StreamChunk, prefix: string, suffix: string): StreamChunk {
  return literalChunk(chunk) ?? snapshotAt(chunk, prefix, suffix, 'none');
}

/**
 * A frozen copy of a list of content blocks whose every block is a text or tool-call block of exactly
 * the expected keys, or undefined (the caller then takes the general snapshot).
 */
export function blocksLiteral(blocks: readonly ContentBlock[]): readonly ContentBlock[] | undefined {
  // The walk copies an array by its indices (named members are not JSON and are not copied).
  if (!Array.isArray(blocks) || Object.isFrozen(blocks)) return undefined;
  const length = blocks.length;
  const out = new Array<ContentBlock>(length);
  for (let index = 0; index < length; index++) {
    if (!(index in blocks)) return undefined;
    const block = blockLiteral(blocks[index]);
    if (block === undefined) return undefined;
    out[index] = block;
  }
  return Object.freeze(out);
}

/**
 * Snapshots token usage as `snapshotAt(usage, prefix, suffix, 'none')` does (same result, same errors),
 * through a literal for the usual `{ inputTokens, outputTokens }`.
 */
export function snapshotUsage(usage: TokenUsage, prefix: string, suffix: string): TokenUsage {
  return usageLiteral(usage) ?? snapshotAt(usage, prefix, suffix, 'none');
}

function usageLiteral(usage: unknown): TokenUsage | undefined {
  if (!isPlainRecord(usage) || !keysAre(usage, countKeys)) return undefined;
  const counts = usage as Partial<Record<string, unknown>>;
  const inputTokens = counts.inputTokens;
  const outputTokens = counts.outputTokens;
  if (!isCount(inputTokens) || !isCount(outputTokens)) return undefined;
  return Object.freeze({ inputTokens, outputTokens });
}

/**
 * The frozen copy of a chunk of one of the common shapes (exactly their members, in order, with valid
 * values; nested block, usage and reason frozen too), built as one literal; undefined for anything else,
 * which `snapshotChunk` then snapshots through the general walk.
 */
export function literalChunk(chunk: StreamChunk): StreamChunk | undefined {
  if (!isPlainRecord(chunk)) return undefined;
  // Members are read only once the keys are known to be exactly the expected ones, as the walk reads them.
  const record = chunk as Partial<Record<string, unknown>>;
  const type = record.type;
  switch (type) {
    case 'text-delta':
    case 'reasoning-delta': {
      if (!keysAre(chunk, deltaKeys)) return undefined;
      const index = record.index;
      const text = record.text;
      if (!isIndex(index) || typeof text !== 'string') return undefined;
      return Object.freeze({ type, index, text });
    }
    case 'block-start': {
      if (!keysAre(chunk, blockStartKeys)) return undefined;
      const index = record.index;
      const blockType = record.blockType;
      if (!isIndex(index) || typeof blockType !== 'string') return undefined;
      return Object.freeze({ type, index, blockType: blockType as ContentBlock['type'] });
    }
    case 'tool-call-delta': {
      if (keysAre(chunk, callDeltaKeys)) {
        const index = record.index;
        const id = record.id;
        const argumentsDelta = record.argumentsDelta;
        if (!isIndex(index) || typeof id !== 'string' || typeof argumentsDelta !== 'string') return undefined;
        return Object.freeze({ type, index, id, argumentsDelta });
      }
      if (!keysAre(chunk, namedCallDeltaKeys)) return undefined;
      const index = record.index;
      const id = record.id;
      const name = record.name;
      const argumentsDelta = record.argumentsDelta;
      if (
        !isIndex(index) ||
        typeof id !== 'string' ||
        typeof name !== 'string' ||
        typeof argumentsDelta !== 'string'
      )
        return undefined;
      return Object.freeze({ type, index, id, name, argumentsDelta });
    }
    case 'block-end': {
      if (!keysAre(chunk, blockEndKeys)) return undefined;
      const index = record.index;
      if (!isIndex(index)) return undefined;
      const block = blockLiteral(record.block);
      return block === undefined ? undefined : Object.freeze({ type, index, block });
    }
    case 'usage': {
      if (!keysAre(chunk, usageKeys)) return undefined;
      const usage = usageLiteral(record.usage);
      return usage === undefined ? undefined : Object.freeze({ type, usage });
    }
    case 'finish': {
      if (!keysAre(chunk, finishKeys)) return undefined;
      const reason = record.reason;
      if (!isPlainRecord(reason) || !keysAre(reason, reasonKeys)) return undefined;
      const kind = (reason as Partial<Record<string, unknown>>).kind;
      if (kind !== 'stop' && kind !== 'tool-calls' && kind !== 'max-tokens') return undefined;
      return Object.freeze({ type, reason: Object.freeze({ kind }) });
    }
    default:
      return undefined;
  }
}

function blockLiteral(block: unknown): ContentBlock | undefined {
  if (!isPlainRecord(block)) return undefined;
  const record = block as Partial<Record<string, unknown>>;
  switch (record.type) {
    case 'text': {
      if (!keysAre(block, textBlockKeys)) return undefined;
      const text = record.text;
      return typeof text === 'string' ? Object.freeze({ type: 'text', text }) : undefined;
    }
    case 'tool-call': {
      if (!keysAre(block, callBlockKeys)) return undefined;
      const id = record.id;
      const name = record.name;
      const rawArguments = record.arguments;
      if (typeof id !== 'string' || typeof name !== 'string' || typeof rawArguments !== 'string')
        return undefined;
      return Object.freeze({ type: 'tool-call', id, name, arguments: rawArguments });
    }
    default:
      return undefined;
  }
}

/** An unfrozen object whose prototype is Object.prototype or null (what the walk copies as a record). */
function isPlainRecord(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.isFrozen(value))
    return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

// The walk copies what for-in yields (enumerable string keys, own and inherited) in that order; this
// accepts exactly the listed keys in the listed order, without allocating a key array.
function keysAre(value: object, keys: readonly string[]): boolean {
  let position = 0;
  for (const key in value) {
    if (key !== keys[position]) return false;
    position++;
  }
  return position === keys.length;
}

const countKeys = ['inputTokens', 'outputTokens'] as const;
const deltaKeys = ['type', 'index', 'text'] as const;
const blockStartKeys = ['type', 'index', 'blockType'] as const;
const callDeltaKeys = ['type', 'index', 'id', 'argumentsDelta'] as const;
const namedCallDeltaKeys = ['type', 'index', 'id', 'name', 'argumentsDelta'] as const;
const blockEndKeys = ['type', 'index', 'block'] as const;
const usageKeys = ['type', 'usage'] as const;
const finishKeys = ['type', 'reason'] as const;
const reasonKeys = ['kind'] as const;
const textBlockKeys = ['type', 'text'] as const;
const callBlockKeys = ['type', 'id', 'name', 'arguments'] as const;

// A block index: a non-negative integer (never -0, which the walk rejects).
function isIndex(value: unknown): value is number {
  return typeof value === 'number' && (value | 0) === value && value >= 0 && 1 / value > 0;
}

// A token count: a finite number the walk accepts (not -0).
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && (value !== 0 || 1 / value > 0);
}
