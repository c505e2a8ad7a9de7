import type { StreamChunk } from '../llm/index.ts';
import type { AssistantItem, TranscriptActivity } from './transcript-item.ts';
import { emptyBlock } from './transcript-parts.ts';

/**
 * Folds one stream chunk into the answer it belongs to, in O(1) of the answer so far (a delta extends
 * one block); returns what the agent is doing now when the chunk tells (writing, thinking), else
 * undefined. `finish` with an error or abort marks the attempt failed or interrupted and ends it.
 */
export function applyStreamChunk(item: AssistantItem, chunk: StreamChunk): TranscriptActivity | undefined {
  switch (chunk.type) {
    case 'block-start':
      item.blocks[chunk.index] ??= emptyBlock(chunk.blockType);
      return undefined;
    case 'text-delta':
    case 'reasoning-delta': {
      const type = chunk.type === 'text-delta' ? 'text' : 'reasoning';
      const block = (item.blocks[chunk.index] ??= emptyBlock(type));
      if (block.type === 'text' || block.type === 'reasoning')
        item.blocks[chunk.index] = { ...block, text: block.text + chunk.text };
      return { kind: type === 'text' ? 'writing' : 'thinking' };
    }
    case 'tool-call-delta': {
      const block = item.blocks[chunk.index];
      const base =
        block?.type === 'tool-call'
          ? block
          : { type: 'tool-call' as const, id: chunk.id, name: '', arguments: '' };
      item.blocks[chunk.index] = {
        ...base,
        name: chunk.name ?? base.name,
        arguments: base.arguments + chunk.argumentsDelta,
      };
      return { kind: 'writing' };
    }
    case 'block-end':
      item.blocks[chunk.index] = chunk.block;
      return undefined;
    case 'finish':
      if (chunk.reason.kind === 'error' || chunk.reason.kind === 'aborted') {
        item.failed = chunk.reason.kind === 'error';
        item.interrupted = chunk.reason.kind === 'aborted';
        item.streaming = false;
      }
      return undefined;
    case 'usage':
      return undefined;
  }
}
