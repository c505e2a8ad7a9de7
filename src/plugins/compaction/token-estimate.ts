import type { ContentBlock, Message, ToolSchema } from '../../llm/index.ts';

// Vendors bill images by pixels, not by the size of their encoding; a flat price keeps the estimate sane.
const imageTokens = 1_600;

/** The heuristic price of one content block: about four characters per token plus a little framing. */
export function estimateBlockTokens(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return Math.ceil(block.text.length / 4) + 4;
    case 'tool-call':
      return Math.ceil(block.name.length / 4) + Math.ceil(block.arguments.length / 4) + 4;
    case 'tool-result': {
      let total = 4;
      for (const inner of block.content) total += estimateBlockTokens(inner);
      return total;
    }
    case 'image':
      return imageTokens;
    default:
      return Math.ceil(JSON.stringify(block).length / 4) + 4;
  }
}

/** The heuristic price of one message: its blocks plus four tokens of framing. */
export function estimateMessageTokens(message: Pick<Message, 'content'>): number {
  let total = 4;
  for (const block of message.content) total += estimateBlockTokens(block);
  return total;
}

/** The heuristic price of a list of messages. */
export function estimateMessagesTokens(messages: readonly Pick<Message, 'content'>[]): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}

/** The heuristic price of the request envelope: the system prompt and the tool schemas. */
export function estimateEnvelopeTokens(
  system: string | undefined,
  tools: readonly ToolSchema[] | undefined,
): number {
  let total = 0;
  if (system !== undefined && system !== '') total += Math.ceil(system.length / 4) + 4;
  if (tools !== undefined && tools.length > 0) total += Math.ceil(JSON.stringify(tools).length / 4) + 4;
  return total;
}
