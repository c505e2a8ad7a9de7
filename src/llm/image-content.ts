import { HarnessError, LlmError } from './llm-error.ts';
import type { LlmErrorCode } from './llm-error.ts';
import type { LlmRequest, ModelInfo } from './llm-request.ts';
import type { ContentBlock, ImageBlock, Message } from './message.ts';

/** The image types a user message may carry: the four both Anthropic and OpenAI-compatible vendors take. */
export const imageMediaTypes: readonly string[] = Object.freeze([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);

/**
 * How much base64 data the images of one user message may carry together (20 MiB). The message is one
 * session-log event, so this bounds the size of a log line as well as the request.
 */
export const maxMessageImageBytes = 20 * 1_048_576;

const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** True when a content list holds an image block at its top level. */
export function hasImages(content: readonly ContentBlock[]): boolean {
  for (const block of content) if (block.type === 'image') return true;
  return false;
}

// Histories whose builder saw every message and found no image: frozen arrays of frozen messages, so the
// fact cannot go stale, and a request carrying one skips the scan of its whole history.
const imageFreeHistories = new WeakSet<readonly Message[]>();

/**
 * Records that `messages`, a frozen array of deep-frozen messages, holds no image block at all; the caller
 * vouches for it (the session's derived history counts images as it grows). Unfrozen arrays are ignored.
 */
export function markImageFree(messages: readonly Message[]): void {
  if (Object.isFrozen(messages)) imageFreeHistories.add(messages);
}

/** True when a model declares image input (`ModelInfo.images`); an unknown model takes none. */
export function acceptsImages(model: ModelInfo | undefined): boolean {
  return model?.images === true;
}

/**
 * Checks the image blocks of a user message before it is queued: an accepted media type, base64 `data`
 * (or an `https:`/`data:` URL), all of them together within `maxMessageImageBytes`. Throws HarnessError
 * `INVALID_IMAGE` or `IMAGES_TOO_LARGE`; text-only content passes untouched.
 */
export function checkImageContent(content: readonly ContentBlock[]): void {
  let total = 0;
  for (let index = 0; index < content.length; index++) {
    const block = content[index]!;
    if (block.type !== 'image') continue;
    total += checkImage(block as Partial<ImageBlock>, index);
    if (total > maxMessageImageBytes) {
      throw new HarnessError(
        'IMAGES_TOO_LARGE',
        `a message's images are limited to ${formatBytes(maxMessageImageBytes)} of base64 together ` +
          `(this one has more than that); send a smaller or downscaled image`,
      );
    }
  }
}

function checkImage(block: Partial<ImageBlock>, index: number): number {
  const problem = imageProblem(block);
  if (problem !== undefined) throw new HarnessError('INVALID_IMAGE', `content[${index}]: ${problem}`);
  return imageSize(block as ImageBlock);
}

/**
 * Why an image block cannot go to a vendor as it is (an unaccepted media type, data that is not base64,
 * neither data nor an https URL), or undefined when it can; its size is left to the caller (`imageSize`).
 */
export function imageProblem(block: Partial<ImageBlock>): string | undefined {
  if (typeof block.mediaType !== 'string' || !imageMediaTypes.includes(block.mediaType)) {
    return `an image's mediaType must be one of ${imageMediaTypes.join(', ')}, not ${JSON.stringify(block.mediaType)}`;
  }
  if (block.data !== undefined) {
    if (typeof block.data !== 'string' || block.data === '' || block.data.length % 4 !== 0) {
      return "an image's data must be non-empty base64";
    }
    // Sized first: the pattern test is linear, and a huge string is refused by its size without scanning it.
    if (block.data.length > maxMessageImageBytes) return undefined;
    return base64.test(block.data) ? undefined : "an image's data must be base64";
  }
  if (typeof block.url === 'string' && /^(https:|data:image\/)/.test(block.url)) return undefined;
  return 'an image needs base64 data or an https URL';
}

/**
 * Throws HarnessError `IMAGES_TOO_LARGE` when an image of `content` is longer than `model` takes
 * (`ModelInfo.imageBytes`), naming the model as `name`; content for a model without such a limit passes.
 */
export function checkImagesFit(
  content: readonly ContentBlock[],
  model: ModelInfo | undefined,
  name: string,
): void {
  const limit = model?.imageBytes;
  if (limit === undefined) return;
  for (const block of content) {
    if (block.type === 'image' && imageSize(block) > limit) {
      throw new HarnessError(
        'IMAGES_TOO_LARGE',
        `${name} takes images of up to ${formatBytes(limit)} of base64, and this one has ` +
          `${formatBytes(imageSize(block))}; send a smaller or downscaled image`,
      );
    }
  }
}

/** The characters an image block adds to a message: its base64 data, or its URL. */
export function imageSize(block: ImageBlock): number {
  return block.data?.length ?? block.url?.length ?? 0;
}

/** The text an image becomes where it cannot be sent: its type, its size, and why (`reason`). */
export function imageNote(block: ImageBlock, reason = 'this model does not accept images'): string {
  const size = block.data !== undefined ? `, ${formatBytes(decodedBytes(block.data))}` : '';
  return `[image: ${block.mediaType}${size} — not shown: ${reason}]`;
}

/** The number of bytes base64 text decodes to. */
export function decodedBytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** A byte count as people read it: `812 B`, `12.3 KB`, `4.1 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1_048_576) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

/**
 * The request as its model can take it. For a model without image input: when the newest prompt (the
 * latest user message that is not a tool result) carries an image, nothing is sent (LlmError
 * `IMAGES_UNSUPPORTED`); images further back (sent while another model served the session) become a short
 * text note, so a session that switched to a text-only model keeps working. For a model with a size
 * limit per image (`ModelInfo.imageBytes`): a larger image in the newest prompt is LlmError
 * `IMAGES_TOO_LARGE`, and larger ones further back or in tool results become notes. Any other request,
 * and a history without images, passes unchanged.
 */
export function imageReadyRequest(request: LlmRequest, model: ModelInfo | undefined): LlmRequest {
  const takesImages = acceptsImages(model);
  const limit = takesImages ? model?.imageBytes : undefined;
  if (takesImages && limit === undefined) return request;
  if (imageFreeHistories.has(request.messages)) return request;
  if (limit === undefined) {
    const sendable = (block: ContentBlock): boolean => block.type !== 'image';
    const note = (block: ImageBlock): string => imageNote(block);
    return shapedRequest(request, sendable, note, false, () =>
      llmErrorFor(
        request,
        'IMAGES_UNSUPPORTED',
        'does not accept images; pick a model that does, or send text',
      ),
    );
  }
  const sendable = (block: ContentBlock): boolean => block.type !== 'image' || imageSize(block) <= limit;
  const reason = `larger than the ${formatBytes(limit)} of base64 this model takes`;
  return shapedRequest(
    request,
    sendable,
    (block) => imageNote(block, reason),
    true,
    () =>
      llmErrorFor(
        request,
        'IMAGES_TOO_LARGE',
        `takes images of up to ${formatBytes(limit)} of base64, and this message has a larger one; ` +
          'send a smaller or downscaled image',
      ),
  );
}

function llmErrorFor(request: LlmRequest, code: LlmErrorCode, text: string): LlmError {
  return new LlmError({ code, message: `${request.provider}/${request.model} ${text}` });
}

// Rebuilds only the messages from the first one holding an image that cannot be sent; `inToolResults`
// also looks inside tool results (a text-only model's adapter writes those images as text itself).
function shapedRequest(
  request: LlmRequest,
  sendable: (block: ContentBlock) => boolean,
  note: (block: ImageBlock) => string,
  inToolResults: boolean,
  refusal: () => LlmError,
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
  if (newestPrompt >= 0 && messages[newestPrompt]!.content.some((block) => !sendable(block))) {
    throw refusal();
  }
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
