import { randomFillSync } from 'node:crypto';

// Random bytes are drawn in batches; each id consumes 16 of them.
const pool = Buffer.allocUnsafe(16 * 128);
let offset = pool.length;
const text = Buffer.allocUnsafe(36);
const hexDigits = Buffer.from('0123456789abcdef', 'latin1');

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
  let position = 0;
  for (let index = 0; index < 16; index++) {
    if (index === 4 || index === 6 || index === 8 || index === 10) text[position++] = 0x2d;
    const byte = pool[offset + index]!;
    text[position++] = hexDigits[byte >> 4]!;
    text[position++] = hexDigits[byte & 0x0f]!;
  }
  offset += 16;
  return text.toString('latin1', 0, 36);
}
