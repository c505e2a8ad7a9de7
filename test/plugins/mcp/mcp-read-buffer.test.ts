import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { McpReadBuffer } from '../../../src/plugins/mcp/mcp-read-buffer.ts';

const parse = (line: string) => JSONRPCMessageSchema.parse(JSON.parse(line));

function drain(buffer: McpReadBuffer): unknown[] {
  const messages: unknown[] = [];
  for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage()) {
    messages.push(message);
  }
  return messages;
}

describe('McpReadBuffer frames stdout into JSON-RPC messages', () => {
  it('messages split across chunks anywhere, several in one chunk, CRLF, and a character cut mid-byte', () => {
    const messages = [
      { jsonrpc: '2.0', id: 1, result: { text: 'ünïcødé 🙂 and a long tail '.repeat(50) } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2 } },
      { jsonrpc: '2.0', id: 2, result: {} },
    ];
    const wire = Buffer.from(
      `${JSON.stringify(messages[0])}\n${JSON.stringify(messages[1])}\r\n${JSON.stringify(messages[2])}\n`,
    );
    for (const size of [1, 2, 3, 7, 64, wire.length]) {
      const buffer = new McpReadBuffer({ maxBytes: 1_048_576, parse });
      const read: unknown[] = [];
      for (let start = 0; start < wire.length; start += size) {
        buffer.append(wire.subarray(start, start + size));
        read.push(...drain(buffer));
      }
      expect(read, `chunks of ${size} bytes`).toEqual(messages);
    }
  });

  it('a message growing past the bound throws and leaves nothing behind; a line that is not JSON throws on read', () => {
    const buffer = new McpReadBuffer({ maxBytes: 100, parse });
    buffer.append(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,'));
    expect(() => buffer.append(Buffer.alloc(100, 120))).toThrow(
      'a message longer than 100 bytes arrived on stdout',
    );
    expect(buffer.readMessage()).toBeNull();
    buffer.append(Buffer.from('not json\n'));
    expect(() => buffer.readMessage()).toThrow(SyntaxError);
    expect(buffer.readMessage()).toBeNull();
  });
});
