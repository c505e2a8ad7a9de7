import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ImageBlock } from '../index.ts';
import { checkImageContent, formatBytes, maxMessageImageBytes } from '../internal.ts';
import { CliError } from './cli-error.ts';

// The first bytes that name each image type models take: the file's content decides, not its name.
const signatures: readonly { mediaType: string; matches: (head: Buffer) => boolean }[] = [
  {
    mediaType: 'image/png',
    matches: (head) => head.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')),
  },
  { mediaType: 'image/jpeg', matches: (head) => head.subarray(0, 3).equals(Buffer.from('ffd8ff', 'hex')) },
  { mediaType: 'image/gif', matches: (head) => /^GIF8[79]a/.test(head.subarray(0, 6).toString('latin1')) },
  {
    mediaType: 'image/webp',
    matches: (head) =>
      head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP',
  },
];

// Base64 turns three bytes into four characters: the largest file whose encoding fits the message bound.
const maxFileBytes = Math.floor(maxMessageImageBytes / 4) * 3;

/**
 * Reads `--image` files (relative to `cwd`) as base64 image blocks, in order. Throws CliError
 * `IMAGE_NOT_FOUND` for a file that cannot be read, `INVALID_IMAGE` for one that is not PNG, JPEG, GIF
 * or WebP (by its content), and `IMAGES_TOO_LARGE` when they exceed what one message may carry.
 */
export async function readImageFiles(paths: readonly string[], cwd: string): Promise<ImageBlock[]> {
  const blocks: ImageBlock[] = [];
  let total = 0;
  for (const path of paths) {
    const data = await readBounded(path, resolve(cwd, path), maxFileBytes - total);
    total += data.length;
    const signature = signatures.find((candidate) => candidate.matches(data));
    if (signature === undefined) {
      throw new CliError(
        'INVALID_IMAGE',
        `${path} is not a PNG, JPEG, GIF or WebP image (the only types models take)`,
      );
    }
    blocks.push({ type: 'image', mediaType: signature.mediaType, data: data.toString('base64') });
  }
  checkImageContent(blocks);
  return blocks;
}

async function readBounded(shown: string, path: string, room: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new CliError('IMAGE_NOT_FOUND', `cannot read the image ${shown}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new CliError('IMAGE_NOT_FOUND', `the image ${shown} is not a file`);
    const size = stat.size;
    if (size > room) {
      throw new CliError(
        'IMAGES_TOO_LARGE',
        `the images of one prompt are limited to ${formatBytes(maxFileBytes)} together; ${shown} has ${formatBytes(size)}`,
      );
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
