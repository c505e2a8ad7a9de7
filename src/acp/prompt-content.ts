import type { ContentBlock as AcpContentBlock } from '@agentclientprotocol/sdk';
import type { ContentBlock } from '../index.ts';
import type { ModelInfo } from '../internal.ts';
import { acceptsImages, checkImageContent, checkImagesFit, imageMediaTypes } from '../internal.ts';
import { reinRequestError } from './acp-errors.ts';
import type { AcpSession } from './acp-session.ts';

/** What the session's current model accepts in prompts. */
export interface PromptAcceptance {
  readonly image: boolean;
  /** The route named in a refusal, `provider/model`. */
  readonly model: string;
  /** The model's facts, for its limit per image (`ModelInfo.imageBytes`). */
  readonly info?: ModelInfo;
}

/**
 * What a session's prompts may carry now: images exactly when the model of its next request declares
 * image input (`ModelInfo.images`), so switching the model option changes it.
 */
export function promptAcceptance(session: AcpSession): PromptAcceptance {
  const route = session.route;
  let image = false;
  let info: ModelInfo | undefined;
  try {
    info = session.harness.llm.prepare(route).model;
    image = acceptsImages(info);
  } catch {
    // A route that no longer prepares takes no images; the prompt itself reports the route.
  }
  return { image, model: `${route.provider}/${route.model}`, ...(info !== undefined ? { info } : {}) };
}

/**
 * Turns an ACP prompt into Rein content blocks: text as is, resource links as Markdown links, embedded
 * text resources as tagged context, images (base64, one of png, jpeg, gif, webp) when the model takes
 * them, embedded image files as images too when it does (as a link otherwise). Throws a protocol error carrying Rein's code: `INVALID_PROMPT` for an empty prompt or audio,
 * `IMAGES_UNSUPPORTED` for an image the model cannot take, `INVALID_IMAGE` / `IMAGES_TOO_LARGE` for an
 * image no model should get or one larger than this model takes. Nothing is queued or logged when it throws.
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
        } else if (
          accepts.image &&
          resource.mimeType != null &&
          imageMediaTypes.includes(resource.mimeType)
        ) {
          // An embedded image file is an image for a model that takes them.
          blocks.push({ type: 'image', mediaType: resource.mimeType, data: resource.blob });
        } else {
          blocks.push({ type: 'text', text: `[@${resource.uri}](${resource.uri}) (binary, not inlined)` });
        }
        break;
      }
      case 'image':
        if (!accepts.image) {
          throw reinRequestError(
            'IMAGES_UNSUPPORTED',
            `${accepts.model} does not accept images; pick a model that does (the model option) or send text`,
          );
        }
        blocks.push({ type: 'image', mediaType: block.mimeType, data: block.data });
        break;
      case 'audio':
        throw reinRequestError('INVALID_PROMPT', 'Rein does not take audio prompts');
    }
  }
  if (blocks.length === 0) throw reinRequestError('INVALID_PROMPT', 'the prompt is empty');
  checkImageContent(blocks);
  checkImagesFit(blocks, accepts.info, accepts.model);
  return blocks;
}
