import { describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../../src/index.ts';
import { mcpResultOutput } from '../../../src/plugins/mcp/index.ts';
import { sandbox } from '../../tools/support.ts';

const png =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const megabytes20 = 20 * 1_048_576;

function output(content: unknown[]) {
  const box = sandbox('rein-mcp-content-');
  try {
    const result = mcpResultOutput({ content }, { outputDirectory: box.base }, {});
    if (typeof result === 'string' || Array.isArray(result) || typeof result.content === 'string') {
      throw new Error('expected a structured tool output with content blocks');
    }
    return { ...result, content: result.content };
  } finally {
    box.cleanup();
  }
}

const shown = (content: readonly ContentBlock[]) =>
  content.map((block) =>
    block.type === 'text' ? block.text : block.type === 'image' ? `image ${block.mediaType}` : block.type,
  );

describe('MCP result images are held to the rules a request must keep', () => {
  it("a result's images may carry 20 MiB of base64 together; the one past it becomes a note, later ones still fit", () => {
    const big = 'A'.repeat(megabytes20 - png.length);
    const result = output([
      { type: 'image', mimeType: 'image/png', data: png },
      { type: 'image', mimeType: 'image/jpeg', data: big },
      { type: 'image', mimeType: 'image/gif', data: 'R0lG' },
      { type: 'text', text: 'after' },
    ]);
    expect(shown(result.content)).toEqual([
      'image image/png',
      'image image/jpeg',
      "[image (image/gif, about 3 bytes) not shown: a tool result's images are limited to 20.0 MB of base64 together]",
      'after',
    ]);
    expect(result.isError).toBeUndefined();
  });

  it('data that is not base64 and an unaccepted type become notes in place, whatever the SDK let through', () => {
    const result = output([
      { type: 'image', mimeType: 'image/png', data: 'not base64!' },
      { type: 'image', mimeType: 'image/bmp', data: png },
      { type: 'resource', resource: { uri: 'file:///a.tiff', mimeType: 'image/tiff', blob: png } },
      { type: 'image', mimeType: 'image/webp', data: png },
    ]);
    expect(shown(result.content)).toEqual([
      "[image (image/png, about 8 bytes) not shown: an image's data must be non-empty base64]",
      '[image (image/bmp, about 72 bytes) not shown: an image\'s mediaType must be one of image/png, image/jpeg, image/gif, image/webp, not "image/bmp"]',
      '[image (image/tiff, about 72 bytes) not shown: an image\'s mediaType must be one of image/png, image/jpeg, image/gif, image/webp, not "image/tiff"]',
      'image image/webp',
    ]);
  });
});
