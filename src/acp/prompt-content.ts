import type { ContentBlock as AcpContentBlock } from '@agentclientprotocol/sdk';
import type { ContentBlock } from '../index.ts';
import { reinRequestError } from './acp-errors.ts';

/** What the agent told the client it accepts in prompts. */
export interface PromptAcceptance {
  readonly image: boolean;
}

/**
 * Turns an ACP prompt into Rein content blocks: text as is, resource links as Markdown links, embedded
 * text resources as tagged context, images when accepted. Throws a protocol error (`INVALID_PROMPT`) for
 * an empty prompt or content the agent did not advertise.
 */
export function promptContent(prompt: readonly AcpContentBlock[], accepts: PromptAcceptance): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const block of prompt) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') blocks.push({ type: 'text', text: block.text });
        break;
      case 'resource_link':
        blocks.push({ type: 'text', text: `[@${block.name}](${block.uri})` });
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource) {
          blocks.push({
            type: 'text',
            text: `<context uri="${resource.uri}">\n${resource.text}\n</context>`,
          });
        } else {
          blocks.push({ type: 'text', text: `[@${resource.uri}](${resource.uri}) (binary, not inlined)` });
        }
        break;
      }
      case 'image':
        if (!accepts.image) {
          throw reinRequestError('INVALID_PROMPT', 'this model does not take images; send text instead');
        }
        blocks.push({ type: 'image', mediaType: block.mimeType, data: block.data });
        break;
      case 'audio':
        throw reinRequestError('INVALID_PROMPT', 'Rein does not take audio prompts');
    }
  }
  if (blocks.length === 0) throw reinRequestError('INVALID_PROMPT', 'the prompt is empty');
  return blocks;
}
