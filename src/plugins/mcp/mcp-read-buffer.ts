import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The part of the SDK's stdio transport this buffer stands in for: it frames stdout into messages. */
export interface StdioReadBuffer {
  append(chunk: Buffer): void;
  readMessage(): JSONRPCMessage | null;
  clear(): void;
}

/**
 * Frames newline-delimited JSON-RPC from a server's stdout in time linear in the bytes read: each chunk
 * is scanned once and a message's chunks are joined once. (The SDK's own buffer copies and rescans all
 * it holds on every chunk, which made an 11 MiB result cost seconds of blocked event loop.) A message
 * that grows past `maxBytes` throws, and the transport closes the connection.
 */
export class McpReadBuffer implements StdioReadBuffer {
  readonly #maxBytes: number;
  readonly #parse: (line: string) => JSONRPCMessage;
  #partial: Buffer[] = [];
  #partialBytes = 0;
  #lines: string[] = [];

  constructor(options: { maxBytes: number; parse: (line: string) => JSONRPCMessage }) {
    this.#maxBytes = options.maxBytes;
    this.#parse = options.parse;
  }

  append(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, end);
      const line =
        this.#partial.length === 0
          ? piece.toString('utf8')
          : Buffer.concat([...this.#partial, piece], this.#partialBytes + piece.length).toString('utf8');
      this.#partial = [];
      this.#partialBytes = 0;
      this.#lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
      start = end + 1;
    }
    if (start < chunk.length) {
      this.#partial.push(chunk.subarray(start));
      this.#partialBytes += chunk.length - start;
      if (this.#partialBytes > this.#maxBytes) {
        this.clear();
        throw new Error(`a message longer than ${this.#maxBytes} bytes arrived on stdout`);
      }
    }
  }

  readMessage(): JSONRPCMessage | null {
    const line = this.#lines.shift();
    return line === undefined ? null : this.#parse(line);
  }

  clear(): void {
    this.#partial = [];
    this.#partialBytes = 0;
    this.#lines = [];
  }
}

/**
 * Puts `buffer` in place of the SDK stdio transport's own read buffer (its `_readBuffer`, read by every
 * `data` event); false, leaving the transport as it was, when this SDK version has no such field.
 */
export function replaceReadBuffer(transport: object, buffer: StdioReadBuffer): boolean {
  const holder = transport as { _readBuffer?: unknown };
  if (typeof holder._readBuffer !== 'object' || holder._readBuffer === null) return false;
  holder._readBuffer = buffer;
  return true;
}
