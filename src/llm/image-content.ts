import { HarnessError } from './llm-error.ts';
import type { ModelInfo } from './llm-request.ts';
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

// Histories whose builder saw every message and found no image carry this (non-enumerable) mark, set just
// before the array is frozen, so the fact cannot go stale and a request carrying one skips the scan of its
// whole history. A mark on the array, not an entry in a WeakSet: adding a long young array to a weak
// collection per request cost the loop measurably (the collector's ephemeron work; bench/README.md).
const imageFreeMark = Symbol('rein.imageFree');

/**
 * Marks `messages`, a fresh array of deep-frozen messages in which its builder found no image block (the
 * session's derived history counts images as it grows), and freezes it; returns the same array.
 */
export function freezeImageFree(messages: Message[]): readonly Message[] {
  Object.defineProperty(messages, imageFreeMark, { value: true });
  return Object.freeze(messages);
}

/** True for a frozen history `freezeImageFree` vouched for: it holds no image at all. */
export function isMarkedImageFree(messages: readonly Message[]): boolean {
  return (
    (messages as { readonly [imageFreeMark]?: true })[imageFreeMark] === true && Object.isFrozen(messages)
  );
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
 * Throws HarnessError `IMAGES_TOO_LARGE` when `content` cannot reach `model` whole: an image longer than
 * it takes (`ModelInfo.imageBytes`), or more images than one request may carry (`imagesPerRequest`,
 * `imageBytesPerRequest`); `name` names the model. Content for a model without such limits passes.
 */
export function checkImagesFit(
  content: readonly ContentBlock[],
  model: ModelInfo | undefined,
  name: string,
): void {
  let count = 0;
  let bytes = 0;
  for (const block of content) {
    if (block.type !== 'image') continue;
    const size = imageSize(block);
    if (model?.imageBytes !== undefined && size > model.imageBytes) {
      throw new HarnessError(
        'IMAGES_TOO_LARGE',
        `${name} takes images of up to ${formatBytes(model.imageBytes)} of base64, and this one has ` +
          `${formatBytes(size)}; send a smaller or downscaled image`,
      );
    }
    count += 1;
    bytes += size;
  }
  const overCount = model?.imagesPerRequest !== undefined && count > model.imagesPerRequest;
  const overBytes = model?.imageBytesPerRequest !== undefined && bytes > model.imageBytesPerRequest;
  if (overCount || overBytes) {
    throw new HarnessError(
      'IMAGES_TOO_LARGE',
      `${name} takes at most ${overCount ? `${model!.imagesPerRequest} images` : `${formatBytes(model!.imageBytesPerRequest!)} of images`} ` +
        `in one request, and this message has ${overCount ? `${count}` : formatBytes(bytes)}; send fewer or smaller images`,
    );
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
