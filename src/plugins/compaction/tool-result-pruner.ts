import type { ContentBlock, ToolResultMessage } from '../../llm/index.ts';
import type { PruneSettings } from './compaction-options.ts';
import type { SurfaceNode } from './surface-nodes.ts';

/** A tool result that pruning would shrink, with its replacement message. */
export interface PruneCandidate {
  readonly node: SurfaceNode;
  readonly replacement: ToolResultMessage;
  readonly removedChars: number;
}

/**
 * The `tool/result` nodes whose text exceeds the threshold, each with a replacement that keeps the
 * head and tail of the text, marks the removed middle, and keeps every non-text block in order.
 */
export function pruneCandidates(nodes: readonly SurfaceNode[], settings: PruneSettings): PruneCandidate[] {
  const candidates: PruneCandidate[] = [];
  for (const node of nodes) {
    if (node.event.type !== 'tool/result' || node.message === undefined) continue;
    const message = node.message as ToolResultMessage;
    const block = message.content[0];
    if (block?.type !== 'tool-result') continue;
    const pruned = prunedContent(block.content, settings);
    if (pruned === undefined) continue;
    const replacement: ToolResultMessage = {
      ...message,
      content: [{ ...block, content: pruned.content }],
    };
    candidates.push({ node, replacement, removedChars: pruned.removedChars });
  }
  return candidates;
}

/** The pruned form of a result's content, or undefined when its text is within the threshold. */
export function prunedContent(
  content: readonly ContentBlock[],
  settings: PruneSettings,
): { content: ContentBlock[]; removedChars: number } | undefined {
  let text = '';
  for (const block of content) if (block.type === 'text') text += block.text;
  const points = Array.from(text);
  if (points.length <= settings.thresholdChars) return undefined;
  const removedChars = points.length - settings.headChars - settings.tailChars;
  const head = points.slice(0, settings.headChars).join('');
  const tail = settings.tailChars > 0 ? points.slice(points.length - settings.tailChars).join('') : '';
  const marker = `\n\n[… ${removedChars} characters of this tool result were removed to save context …]\n\n`;
  const result: ContentBlock[] = [];
  let placed = false;
  for (const block of content) {
    if (block.type !== 'text') {
      result.push(block);
      continue;
    }
    // All text collapses into one block at the position of the first text block.
    if (!placed) {
      result.push({ type: 'text', text: head + marker + tail });
      placed = true;
    }
  }
  return { content: result, removedChars };
}
