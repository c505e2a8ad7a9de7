import type { Message } from '../../llm/index.ts';
import type { AnySessionEvent, Session } from '../../session/index.ts';
import { modelVisibleMessage } from '../../session/index.ts';
import { estimateMessageTokens } from './token-estimate.ts';

/** One node of the model-visible surface with what it contributes to a request. */
export interface SurfaceNode {
  readonly seq: number;
  readonly event: AnySessionEvent;
  /** The message the node derives to, or undefined when it contributes nothing (an empty assistant anchor). */
  readonly message: Message | undefined;
  /** The heuristic token price of that message (0 when it contributes nothing). */
  readonly tokens: number;
  /** Ids of the tool calls the node's assistant message makes. */
  readonly callIds: readonly string[];
  /** The call id a `tool/result` node answers. */
  readonly resultFor: string | undefined;
}

// Events are frozen and never change, so a node's facts can be cached by the event object.
const nodeCache = new WeakMap<AnySessionEvent, SurfaceNode>();

interface SurfaceIndex {
  generation: number;
  nodes: SurfaceNode[];
  tokens: number;
}

// Appends only extend the surface; a replacement bumps the generation. So (generation, length) names a
// state, and the priced node list is extended per new node and rebuilt only after a replacement.
const surfaceIndexes = new WeakMap<Session, SurfaceIndex>();

/** The surface of a session as priced nodes, in surface order (a shared array: do not mutate). */
export function readSurface(session: Session): readonly SurfaceNode[] {
  return indexOf(session).nodes;
}

/** The heuristic price of the whole surface. */
export function surfaceTokens(session: Session): number {
  return indexOf(session).tokens;
}

function indexOf(session: Session): SurfaceIndex {
  const seqs = session.surfaceNodes;
  const log = session.log;
  let index = surfaceIndexes.get(session);
  if (
    index === undefined ||
    index.generation !== session.replaceGeneration ||
    index.nodes.length > seqs.length
  ) {
    index = { generation: session.replaceGeneration, nodes: [], tokens: 0 };
    surfaceIndexes.set(session, index);
  }
  for (let position = index.nodes.length; position < seqs.length; position++) {
    const node = surfaceNodeOf(log.at(seqs[position]!)!);
    index.nodes.push(node);
    index.tokens += node.tokens;
  }
  return index;
}

/** The priced node of one surface event. */
export function surfaceNodeOf(event: AnySessionEvent): SurfaceNode {
  const cached = nodeCache.get(event);
  if (cached !== undefined) return cached;
  const message = modelVisibleMessage(event);
  const callIds: string[] = [];
  let resultFor: string | undefined;
  if (message !== undefined && event.type === 'assistant/message') {
    for (const block of message.content) if (block.type === 'tool-call') callIds.push(block.id);
  }
  if (message !== undefined && event.type === 'tool/result') {
    for (const block of message.content) if (block.type === 'tool-result') resultFor = block.toolCallId;
  }
  const node: SurfaceNode = {
    seq: event.seq,
    event,
    message,
    tokens: message === undefined ? 0 : estimateMessageTokens(message),
    callIds,
    resultFor,
  };
  nodeCache.set(event, node);
  return node;
}

/** True when every tool call among the nodes has its result among them, and every result its call. */
export function isPairingBalanced(nodes: readonly SurfaceNode[]): boolean {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const node of nodes) {
    for (const id of node.callIds) calls.add(id);
    if (node.resultFor !== undefined) results.add(node.resultFor);
  }
  if (calls.size !== results.size) return false;
  for (const id of calls) if (!results.has(id)) return false;
  return true;
}
