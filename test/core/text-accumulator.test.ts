import { describe, expect, it } from 'vitest';
import { BlockAssembler, TextAccumulator } from '../../src/internal.ts';

describe('text accumulator', () => {
  it('joins any number of pieces in order, across its join boundary, and keeps working after a read', () => {
    for (const count of [0, 1, 2, 255, 256, 257, 1_000]) {
      const pieces = Array.from({ length: count }, (_, index) => `<${index}>`);
      const text = new TextAccumulator();
      for (const piece of pieces) text.push(piece);
      expect(text.toString()).toBe(pieces.join(''));
      expect(text.toString()).toBe(pieces.join(''));
      text.push('!');
      text.push('?');
      expect(text.toString()).toBe(`${pieces.join('')}!?`);
    }
  });

  it('ignores empty pieces, including a first empty piece', () => {
    const text = new TextAccumulator();
    text.push('');
    text.push('a');
    text.push('');
    text.push('b');
    expect(text.toString()).toBe('ab');
  });

  it('lets the block assembler build long text and arguments exactly', () => {
    const assembler = new BlockAssembler();
    const words = Array.from({ length: 700 }, (_, index) => `w${index} `);
    for (const word of words) assembler.push({ type: 'text-delta', index: 0, text: word });
    const args = Array.from({ length: 300 }, (_, index) => `${index},`);
    for (const part of args)
      assembler.push({ type: 'tool-call-delta', index: 1, id: 'c', name: 'n', argumentsDelta: part });
    expect(assembler.interruptedPrefix()).toEqual([{ type: 'text', text: words.join('') }]);
    expect(assembler.result().content).toEqual([
      { type: 'text', text: words.join('') },
      { type: 'tool-call', id: 'c', name: 'n', arguments: args.join('') },
    ]);
  });
});
