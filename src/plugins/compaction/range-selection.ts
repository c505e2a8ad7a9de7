import type { SurfaceNode } from './surface-nodes.ts';

/** A head-anchored surface range chosen for summarization. */
export interface CompactionRange {
  /** The shadowed nodes, in surface order (the first is the surface head). */
  readonly nodes: readonly SurfaceNode[];
  /** Their heuristic price. */
  readonly tokens: number;
}

/**
 * Selects the oldest range that leaves at least `retainTokens` (and always the newest node) at the
 * tail, moving the cut toward the head until no tool call is separated from its result; undefined
 * when the cut reaches the head.
 */
export function selectRange(
  nodes: readonly SurfaceNode[],
  retainTokens: number,
): CompactionRange | undefined {
  if (nodes.length < 2) return undefined;
  let cut = nodes.length - 1;
  let kept = nodes[cut]!.tokens;
  while (kept < retainTokens && cut > 0) {
    cut--;
    kept += nodes[cut]!.tokens;
  }
  const balanced = balancedCuts(nodes);
  while (cut > 0 && !balanced[cut]) cut--;
  if (cut === 0) return undefined;
  const range = nodes.slice(0, cut);
  let tokens = 0;
  for (const node of range) tokens += node.tokens;
  // A range that derives to nothing (only empty anchors) frees nothing.
  if (tokens === 0) return undefined;
  return { nodes: range, tokens };
}

/** `result[p]` is true when every call among `nodes[0..p-1]` is answered among them. */
function balancedCuts(nodes: readonly SurfaceNode[]): boolean[] {
  const open = new Set<string>();
  const result: boolean[] = [true];
  for (const node of nodes) {
    for (const id of node.callIds) open.add(id);
    if (node.resultFor !== undefined) open.delete(node.resultFor);
    result.push(open.size === 0);
  }
  return result;
}
