import { acceptsImages, formatBytes, imageNote, imageSize, isMarkedImageFree } from './image-content.ts';
import { LlmError } from './llm-error.ts';
import type { LlmErrorCode } from './llm-error.ts';
import type { LlmRequest, ModelInfo } from './llm-request.ts';
import type { ContentBlock, ImageBlock, Message } from './message.ts';

/**
 * The request as its model can take it, decided by the model's facts alone.
 *
 * - A model without image input (`ModelInfo.images`): when the newest prompt (the latest user message
 *   that is not a tool result) carries an image, nothing is sent (LlmError `IMAGES_UNSUPPORTED`); images
 *   further back (sent while another model served the session) become a short text note, so a session
 *   that switched to a text-only model keeps working.
 * - A model with limits (`imageBytes` per image, `imagesPerRequest` and `imageBytesPerRequest` for the
 *   whole request): the newest images are kept while they fit, counting from the end of the history;
 *   an image over the per-image size and every image older than the first that no longer fits become
 *   notes, inside tool results too. A newest prompt that cannot be sent whole is LlmError
 *   `IMAGES_TOO_LARGE`.
 *
 * Any other request, and a history without images, passes unchanged; the log always keeps the images.
 */
export function imageReadyRequest(request: LlmRequest, model: ModelInfo | undefined): LlmRequest {
  const takesImages = acceptsImages(model);
  if (takesImages && !hasImageLimits(model!)) return request;
  if (isMarkedImageFree(request.messages)) return request;
  if (!takesImages) {
    return shapedRequest(
      request,
      (block) => block.type !== 'image',
      (block) => imageNote(block),
      false,
      () =>
        refusal(
          request,
          'IMAGES_UNSUPPORTED',
          'does not accept images; pick a model that does, or send text',
        ),
    );
  }
  const limit = model!.imageBytes ?? Number.POSITIVE_INFINITY;
  const pastBudget = olderImagesPastBudget(request.messages, model!, limit);
  const sizeReason = `larger than the ${formatBytes(limit)} of base64 this model takes`;
  const budgetReason = `an older image past the ${budgetText(model!)} this model takes in one request`;
  return shapedRequest(
    request,
    (block) => block.type !== 'image' || (imageSize(block) <= limit && !pastBudget.has(block)),
    (block) => imageNote(block, pastBudget.has(block) ? budgetReason : sizeReason),
    true,
    (blocks) =>
      blocks.some((block) => block.type === 'image' && imageSize(block) > limit)
        ? refusal(
            request,
            'IMAGES_TOO_LARGE',
            `takes images of up to ${formatBytes(limit)} of base64, and this message has a larger one; ` +
              'send a smaller or downscaled image',
          )
        : refusal(
            request,
            'IMAGES_TOO_LARGE',
            `takes at most ${budgetText(model!)} in one request, and this message alone has more; ` +
              'send fewer or smaller images',
          ),
  );
}

function hasImageLimits(model: ModelInfo): boolean {
  return (
    model.imageBytes !== undefined ||
    model.imagesPerRequest !== undefined ||
    model.imageBytesPerRequest !== undefined
  );
}

function budgetText(model: ModelInfo): string {
  const parts: string[] = [];
  if (model.imagesPerRequest !== undefined) parts.push(`${model.imagesPerRequest} images`);
  if (model.imageBytesPerRequest !== undefined) {
    parts.push(`${formatBytes(model.imageBytesPerRequest)} of images`);
  }
  return parts.join(' or ');
}

function refusal(request: LlmRequest, code: LlmErrorCode, text: string): LlmError {
  return new LlmError({ code, message: `${request.provider}/${request.model} ${text}` });
}

// The images that no longer fit the request's budget, counted from the newest: the first that does not
// fit and every older one, so the notes form one run at the start of the history (the cached prefix
// changes only when the budget moves, not with every new image). Images over the per-image size become
// notes anyway and count for nothing.
function olderImagesPastBudget(
  messages: readonly Message[],
  model: ModelInfo,
  limit: number,
): ReadonlySet<ImageBlock> {
  const past = new Set<ImageBlock>();
  const maxCount = model.imagesPerRequest ?? Number.POSITIVE_INFINITY;
  const maxBytes = model.imageBytesPerRequest ?? Number.POSITIVE_INFINITY;
  let count = 0;
  let bytes = 0;
  let full = false;
  const visit = (content: readonly ContentBlock[]): void => {
    for (let index = content.length - 1; index >= 0; index--) {
      const block = content[index]!;
      if (block.type === 'tool-result') visit(block.content);
      if (block.type !== 'image') continue;
      const size = imageSize(block);
      if (size > limit) continue;
      if (!full && count + 1 <= maxCount && bytes + size <= maxBytes) {
        count += 1;
        bytes += size;
        continue;
      }
      full = true;
      past.add(block);
    }
  };
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'user') visit(message.content);
  }
  return past;
}

// Rebuilds only the messages from the first one holding an image that cannot be sent; `inToolResults`
// also looks inside tool results (a text-only model's adapter writes those images as text itself).
function shapedRequest(
  request: LlmRequest,
  sendable: (block: ContentBlock) => boolean,
  note: (block: ImageBlock) => string,
  inToolResults: boolean,
  refuse: (newestPrompt: readonly ContentBlock[]) => LlmError,
): LlmRequest {
  const messages = request.messages;
  const unsendable = (content: readonly ContentBlock[]): boolean =>
    content.some(
      (block) =>
        !sendable(block) || (inToolResults && block.type === 'tool-result' && unsendable(block.content)),
    );
  let first = -1;
  let newestPrompt = -1;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'user') continue;
    if (newestPrompt < 0 && message.source.kind !== 'tool') newestPrompt = index;
    if (unsendable(message.content)) first = index;
  }
  if (first < 0) return request;
  const prompt = newestPrompt >= 0 ? messages[newestPrompt]!.content : [];
  if (prompt.some((block) => !sendable(block))) throw refuse(prompt);
  const replaced = (content: readonly ContentBlock[]): ContentBlock[] =>
    content.map((block, position) => {
      if (inToolResults && block.type === 'tool-result' && unsendable(block.content)) {
        return { ...block, content: replaced(block.content) };
      }
      if (block.type !== 'image' || sendable(block)) return block;
      // On a line of its own: vendors that take one string per message join text blocks without a gap.
      return { type: 'text' as const, text: `${position > 0 ? '\n' : ''}${note(block)}` };
    });
  const shaped: Message[] = messages.slice(0, first);
  for (let index = first; index < messages.length; index++) {
    const message = messages[index]!;
    shaped.push(
      message.role === 'user' && unsendable(message.content)
        ? { ...message, content: replaced(message.content) }
        : message,
    );
  }
  return { ...request, messages: shaped };
}
