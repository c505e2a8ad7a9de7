import { useLayoutEffect, useRef } from 'preact/hooks';

// A piece closes at the first line end after this many characters: the next characters go into a new
// piece, so a growing text never re-lays out more than its last piece.
const pieceLength = 4_096;

/**
 * Plain text that grows (a streaming reasoning block): the new characters are appended to the last
 * piece, an element of its own, instead of replacing the whole text every frame. The pieces split only
 * after a line end, so the text shows exactly as one `white-space: pre-wrap` element would show it.
 */
export function GrowingPlainText({ text }: { text: string }) {
  const element = useRef<HTMLDivElement>(null);
  const state = useRef({ shown: '', piece: undefined as Text | undefined });
  useLayoutEffect(() => {
    const container = element.current;
    if (container === null) return;
    const current = state.current;
    if (!text.startsWith(current.shown)) {
      // Replaced, not extended (a new attempt): start over.
      container.replaceChildren();
      current.shown = '';
      current.piece = undefined;
    }
    let added = text.slice(current.shown.length);
    while (added !== '') {
      let piece = current.piece;
      if (piece === undefined || (piece.length >= pieceLength && piece.data.endsWith('\n'))) {
        const block = document.createElement('div');
        piece = document.createTextNode('');
        block.append(piece);
        container.append(block);
        current.piece = piece;
      }
      let take = added.length;
      const room = pieceLength - piece.length;
      if (take > room) {
        const lineEnd = added.indexOf('\n', Math.max(0, room - 1));
        take = lineEnd < 0 ? added.length : lineEnd + 1;
      }
      piece.appendData(added.slice(0, take));
      added = added.slice(take);
    }
    current.shown = text;
  }, [text]);
  // No children: the pieces in this element are inserted by the effect above, each extended in place.
  return <div class="plain" ref={element} />;
}
