import type { ContentBlock } from '../index.ts';
import { imageMediaTypes, maxMessageImageBytes } from '../internal.ts';
import { HttpError } from './http-error.ts';
import { objectBody } from './request-body.ts';

// Images a message may carry: the SDK's own list and bound, so the API refuses what `followup` would.
const imageTypes: ReadonlySet<string> = new Set(imageMediaTypes);
const maxImageBytes = maxMessageImageBytes;
const maxTextBytes = 1_048_576;
const sendModes = ['followup', 'steer', 'inject'] as const;

/** How large a message body may be: its images' bound plus the 1 MiB every body may carry. */
export const messageBodyLimit = maxImageBytes + 1_048_576;

/** The checked fields of a message body: its text, its images and how it is sent. */
export interface MessageFields {
  text: string;
  images: ContentBlock[];
  mode: (typeof sendModes)[number];
}

/**
 * Reads a message body: non-empty `text` (or images) of at most 1 MiB, `images` of accepted types and
 * size, and a send `mode`; HttpError 400 / 413 otherwise.
 */
export function messageFields(body: unknown): MessageFields {
  const fields = objectBody(body);
  const text = fields.text;
  const images = imagesOf(fields.images);
  if (typeof text !== 'string' || (text.trim() === '' && images.length === 0)) {
    throw new HttpError(400, 'INVALID_REQUEST', 'text must be a non-empty string');
  }
  // The route reads larger bodies for images only: the text keeps the 1 MiB bound of every body.
  if (Buffer.byteLength(text) > maxTextBytes) {
    throw new HttpError(413, 'BODY_TOO_LARGE', `a message's text is limited to ${maxTextBytes} bytes`);
  }
  const mode = fields.mode ?? 'followup';
  if (!sendModes.includes(mode as (typeof sendModes)[number])) {
    throw new HttpError(400, 'INVALID_REQUEST', `mode must be one of ${sendModes.join(', ')}`);
  }
  return { text, images, mode: mode as (typeof sendModes)[number] };
}

/**
 * The optional `reasoningEffort` of a model choice: a level (`low`, `high`, `none`…) or a thinking
 * budget in tokens (`"8000"`); empty or absent means the model's default.
 */
export function reasoningEffortField(fields: Record<string, unknown>): string | undefined {
  const value = fields.reasoningEffort;
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value !== 'string' || !/^[a-z]+$|^\d+$/.test(value)) {
    throw new HttpError(
      400,
      'INVALID_REQUEST',
      'reasoningEffort must be a level such as "high" or a token budget',
    );
  }
  return value;
}

/** The `images` of a message body: `{ mediaType, data }` with base64 data of an accepted image type. */
function imagesOf(value: unknown): ContentBlock[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new HttpError(400, 'INVALID_REQUEST', 'images must be an array');
  let bytes = 0;
  return value.map((image: unknown, index) => {
    const { mediaType, data } = (image ?? {}) as { mediaType?: unknown; data?: unknown };
    if (typeof mediaType !== 'string' || !imageTypes.has(mediaType)) {
      throw new HttpError(
        400,
        'INVALID_IMAGE',
        `images[${index}].mediaType must be one of ${[...imageTypes].join(', ')}`,
      );
    }
    if (typeof data !== 'string' || data === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
      throw new HttpError(400, 'INVALID_IMAGE', `images[${index}].data must be base64`);
    }
    bytes += data.length;
    if (bytes > maxImageBytes) {
      throw new HttpError(
        413,
        'IMAGES_TOO_LARGE',
        `a message's images are limited to ${maxImageBytes} bytes of base64`,
      );
    }
    return { type: 'image', mediaType, data };
  });
}
