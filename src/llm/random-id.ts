import { randomFillSync } from 'node:crypto';

// Random bytes are drawn in batches; each id consumes 16 of them.
const pool = Buffer.allocUnsafe(16 * 128);
let offset = pool.length;
// Its own memory, not a slice of Node's shared pool: the 16-bit view needs an even offset.
const text = Buffer.from(new ArrayBuffer(36));
// The id's 32 hex digits are first written as 16 two-digit pairs, each one 16-bit store.
const digitPairs = new Uint16Array(text.buffer, text.byteOffset, 16);
const hexPairs = new Uint16Array(256);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
for (let byte = 0; byte < 256; byte++) {
  const high = '0123456789abcdef'.charCodeAt(byte >> 4);
  const low = '0123456789abcdef'.charCodeAt(byte & 0x0f);
  hexPairs[byte] = littleEndian ? high | (low << 8) : (high << 8) | low;
}
const dash = 0x2d;

/**
 * A random RFC 4122 version 4 UUID, like `crypto.randomUUID()`, returned as one flat string: Node's own
 * builds it by concatenation, and a log keeps thousands of ids, each otherwise a tree of string pieces.
 */
export function randomId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  pool[offset + 6] = (pool[offset + 6]! & 0x0f) | 0x40;
  pool[offset + 8] = (pool[offset + 8]! & 0x3f) | 0x80;
  // A step makes two ids, mostly before the optimizing compiler has seen this function: there, one
  // table store per byte and four native moves cost about two thirds of a loop writing digit by digit.
  for (let index = 0; index < 16; index++) digitPairs[index] = hexPairs[pool[offset + index]!]!;
  offset += 16;
  // The groups move apart from the last one down, so no move overwrites digits not yet moved.
  text.copyWithin(24, 20, 32);
  text[23] = dash;
  text.copyWithin(19, 16, 20);
  text[18] = dash;
  text.copyWithin(14, 12, 16);
  text[13] = dash;
  text.copyWithin(9, 8, 12);
  text[8] = dash;
  return text.toString('latin1', 0, 36);
}
