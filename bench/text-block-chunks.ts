import type { Session } from '../src/index.ts';

/**
 * Appends one streamed text block to `session` as the loop logs it (block start, `deltas` text deltas,
 * block end carrying the whole text) and returns that text.
 */
export function appendTextBlockChunks(session: Session, turn: number, step: number, deltas: number): string {
  session.append('assistant/chunk', {
    turn,
    step,
    chunk: { type: 'block-start', index: 0, blockType: 'text' },
  });
  let whole = '';
  for (let index = 0; index < deltas; index++) {
    const text = `word${index % 17} `;
    whole += text;
    session.append('assistant/chunk', { turn, step, chunk: { type: 'text-delta', index: 0, text } });
  }
  session.append('assistant/chunk', {
    turn,
    step,
    chunk: { type: 'block-end', index: 0, block: { type: 'text', text: whole } },
  });
  return whole;
}
