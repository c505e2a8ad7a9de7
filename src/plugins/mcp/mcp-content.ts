import type { ContentBlock, ImageBlock } from '../../llm/index.ts';
import { formatBytes, imageProblem, imageSize, maxMessageImageBytes } from '../../llm/index.ts';
import type { ToolOutput } from '../../tools/index.ts';
import type { OutputLimit } from '../../tools/builtin/index.ts';
import { boundText, defaultOutputMaxBytes } from '../../tools/builtin/index.ts';

/** The parts of an MCP `tools/call` result Rein reads (the SDK's CallToolResult, loosely typed). */
export interface McpCallResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  /** Very old servers answer with `toolResult` instead of content. */
  readonly toolResult?: unknown;
}

/** Where bounded output spills and how much of it the model sees. */
export interface McpOutputSettings {
  readonly outputDirectory: string;
  readonly outputLimit?: OutputLimit;
}

type Part = { kind: 'text'; text: string } | { kind: 'image'; block: ImageBlock };

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function describeBinary(
  kind: string,
  uri: string | undefined,
  mimeType: unknown,
  base64: string,
  reason?: string,
): string {
  const bytes = Math.floor((base64.length * 3) / 4);
  const type = typeof mimeType === 'string' ? mimeType : 'unknown type';
  const why = reason !== undefined ? `: ${reason}` : '';
  return `[${kind}${uri !== undefined ? ` ${uri}` : ''} (${type}, about ${bytes} bytes) not shown${why}]`;
}

function partsOf(item: unknown): Part[] {
  const block = record(item);
  if (block === undefined) return [{ kind: 'text', text: JSON.stringify(item) ?? '' }];
  switch (block.type) {
    case 'text':
      return [{ kind: 'text', text: typeof block.text === 'string' ? block.text : '' }];
    case 'image':
      if (typeof block.data === 'string' && typeof block.mimeType === 'string') {
        return [{ kind: 'image', block: { type: 'image', mediaType: block.mimeType, data: block.data } }];
      }
      return [{ kind: 'text', text: '[an image without data]' }];
    case 'audio':
      return [
        { kind: 'text', text: describeBinary('audio', undefined, block.mimeType, String(block.data ?? '')) },
      ];
    case 'resource': {
      const resource = record(block.resource) ?? {};
      const uri = typeof resource.uri === 'string' ? resource.uri : undefined;
      if (typeof resource.text === 'string') {
        return [{ kind: 'text', text: `[resource ${uri ?? ''}]\n${resource.text}` }];
      }
      if (typeof resource.blob === 'string') {
        if (typeof resource.mimeType === 'string' && resource.mimeType.startsWith('image/')) {
          return [
            { kind: 'image', block: { type: 'image', mediaType: resource.mimeType, data: resource.blob } },
          ];
        }
        return [{ kind: 'text', text: describeBinary('resource', uri, resource.mimeType, resource.blob) }];
      }
      return [{ kind: 'text', text: `[resource ${uri ?? ''}]` }];
    }
    case 'resource_link': {
      const facts = [
        typeof block.name === 'string' ? block.name : undefined,
        typeof block.mimeType === 'string' ? block.mimeType : undefined,
        typeof block.description === 'string' ? block.description : undefined,
      ].filter((fact) => fact !== undefined);
      return [
        {
          kind: 'text',
          text: `[resource link ${String(block.uri ?? '')}${facts.length > 0 ? `: ${facts.join('; ')}` : ''}]`,
        },
      ];
    }
    default:
      return [{ kind: 'text', text: JSON.stringify(block) }];
  }
}

/**
 * Checks a result's images by the rules a user message's images follow, so that every request Rein sends
 * is one the vendor accepts: an image of another type, with data that is not base64, or past the 20 MiB a
 * result's images may carry together becomes a text note saying what was not shown and why.
 */
function checkedImages(parts: readonly Part[]): Part[] {
  let carried = 0;
  return parts.map((part) => {
    if (part.kind !== 'image') return part;
    const { block } = part;
    const problem = imageProblem(block);
    const size = imageSize(block);
    if (problem === undefined && carried + size <= maxMessageImageBytes) {
      carried += size;
      return part;
    }
    const why =
      problem ??
      `a tool result's images are limited to ${formatBytes(maxMessageImageBytes)} of base64 together`;
    return { kind: 'text', text: describeBinary('image', undefined, block.mediaType, block.data ?? '', why) };
  });
}

/**
 * Maps an MCP tool result to a tool output: text, embedded resources, resource links and structured
 * content become text (bounded to the output cap exactly like the built-in tools', the whole text
 * spilled to a private file when cut), images a vendor takes stay images (others become notes), and
 * `isError` makes it an error result.
 */
export function mcpResultOutput(
  result: McpCallResult,
  settings: McpOutputSettings,
  meta: Record<string, unknown>,
): ToolOutput {
  let parts: Part[] = [];
  const content = Array.isArray(result.content) ? result.content : [];
  for (const item of content) parts.push(...partsOf(item));
  if (content.length === 0 && result.toolResult !== undefined) {
    parts.push({ kind: 'text', text: JSON.stringify(result.toolResult) });
  }
  parts = checkedImages(parts);
  const outputMeta: Record<string, unknown> = { ...meta };
  if (result.structuredContent !== undefined) {
    // Kept for programs (UIs, SDK listeners) when it is no larger than what the model may see.
    const json = JSON.stringify(result.structuredContent) ?? '';
    if (Buffer.byteLength(json) <= (settings.outputLimit?.maxBytes ?? defaultOutputMaxBytes)) {
      outputMeta.structuredContent = result.structuredContent;
    }
    // Servers should serialize structured content into a text block too; only without any text is it shown.
    const covered = parts.some((part) => part.kind === 'text');
    if (!covered) parts.push({ kind: 'text', text: JSON.stringify(result.structuredContent, null, 2) });
  }
  const texts = parts.filter((part) => part.kind === 'text').map((part) => part.text);
  const whole = texts.join('\n');
  const bounded = boundText(whole, {
    directory: settings.outputDirectory,
    ...(settings.outputLimit !== undefined ? { limit: settings.outputLimit } : {}),
  });
  const blocks: ContentBlock[] = [];
  if (bounded.omittedBytes > 0) {
    // Cut: the model sees one bounded text, then the images in their order.
    blocks.push({ type: 'text', text: bounded.text });
    for (const part of parts) if (part.kind === 'image') blocks.push(part.block);
    if (bounded.spillPath !== undefined) outputMeta.outputFile = bounded.spillPath;
  } else {
    for (const part of parts) {
      blocks.push(part.kind === 'text' ? { type: 'text', text: part.text } : part.block);
    }
  }
  if (blocks.length === 0)
    blocks.push({ type: 'text', text: result.isError === true ? 'the tool failed' : '(no output)' });
  return { content: blocks, meta: outputMeta, ...(result.isError === true ? { isError: true } : {}) };
}
