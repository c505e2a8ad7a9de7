import { MarkdownBlockSplitter } from './markdown-blocks.ts';
import { addCopyButtons, highlightWithin, renderMarkdownBlocks, renderMarkdownInto } from './markdown.ts';

// An open tail longer than this (a long code block still streaming) is shown as plain text, extended
// by the new characters each frame, until its block completes: re-parsing it every frame would cost
// the whole block per frame.
const markdownTailLimit = 4_096;
// Completed blocks are kept in groups of this many: the browser checks each group, not each block,
// for being on screen (`content-visibility: auto`) and lays out a list of groups, so a frame's layout
// does not grow with every paragraph of a long answer.
const groupSize = 16;
// Completed blocks rendered together (one sanitize and one HTML parse for those without raw HTML):
// each parse makes a document, which costs more than a paragraph's markup.
const batchSize = 8;

/**
 * Renders growing markdown into one element, block by block, for a cost per call of the text added
 * since the last call: each completed top-level block is parsed, sanitized and inserted once (a few at a
 * time, `renderMarkdownBlocks`); the open
 * tail is re-rendered while short and extended as plain text once long. `update` stops inserting
 * blocks once its time budget is spent and says so (the element is `aria-busy` until it catches up),
 * so the caller continues in the next frame.
 */
export class StreamingMarkdown {
  readonly #element: HTMLElement;
  readonly #splitter = new MarkdownBlockSplitter();
  #generation = 0;
  // Completed blocks already in the element (in groups, in order, before the tail element).
  #rendered = 0;
  #group: HTMLElement | undefined;
  #tail: HTMLElement | undefined;
  // What the tail element shows: where it starts in the text and how long it is (the text only grows
  // within a generation, so these name its content), and whether it is plain text.
  #tailLength = 0;
  #tailStart = -1;
  #tailPlain = false;

  constructor(element: HTMLElement) {
    this.#element = element;
  }

  /**
   * Brings the element up to `text` (the whole text so far; `complete` once it stops growing, so its
   * last block renders as markdown whatever its length); returns false when completed blocks are still
   * waiting because `deadline` (a `performance.now()` time) passed: call again with the latest text.
   */
  update(text: string, deadline: number, complete = false): boolean {
    const tail = this.#splitter.update(text);
    if (this.#splitter.generation !== this.#generation) {
      // The text was replaced, not extended (a new attempt): start over.
      this.#generation = this.#splitter.generation;
      this.#element.replaceChildren();
      this.#rendered = 0;
      this.#group = undefined;
      this.#tail = undefined;
      this.#tailLength = 0;
      this.#tailStart = -1;
    }
    const splitter = this.#splitter;
    // At least one batch per call, so a slow machine still makes progress.
    while (this.#rendered < splitter.blockCount) {
      const texts: string[] = [];
      const end = Math.min(splitter.blockCount, this.#rendered + batchSize);
      for (let index = this.#rendered; index < end; index++) texts.push(splitter.block(index));
      for (const block of renderMarkdownBlocks(texts)) {
        if (this.#rendered % groupSize === 0) {
          this.#group = document.createElement('div');
          this.#group.className = 'markdown-group';
          this.#element.insertBefore(this.#group, this.#tail ?? null);
        }
        this.#group!.append(block);
        this.#rendered++;
      }
      if (this.#rendered < splitter.blockCount && performance.now() >= deadline) {
        // The tail would show text that now belongs to blocks not yet inserted: hide it until then.
        this.#showTail('', -1, complete);
        this.#element.setAttribute('aria-busy', 'true');
        return false;
      }
    }
    this.#showTail(tail, splitter.tailStart, complete);
    this.#element.removeAttribute('aria-busy');
    return true;
  }

  #showTail(text: string, start: number, complete: boolean): void {
    if (text.trim() === '') {
      this.#tail?.remove();
      this.#tail = undefined;
      this.#tailLength = 0;
      this.#tailStart = -1;
      return;
    }
    if (text.length === this.#tailLength && start === this.#tailStart && (!complete || !this.#tailPlain))
      return;
    if (this.#tail === undefined) {
      this.#tail = document.createElement('div');
      this.#element.append(this.#tail);
    }
    const tail = this.#tail;
    if (complete || text.length <= markdownTailLimit) {
      tail.className = 'markdown-block';
      renderMarkdownInto(tail, text);
      highlightWithin(tail);
      addCopyButtons(tail);
      this.#tailPlain = false;
    } else if (this.#tailPlain && start === this.#tailStart) {
      // The same open block, longer: only the new characters are added.
      (tail.firstChild as Text).appendData(text.slice(this.#tailLength));
    } else {
      tail.className = 'markdown-block markdown-tail-plain';
      tail.textContent = text;
      this.#tailPlain = true;
    }
    this.#tailLength = text.length;
    this.#tailStart = start;
  }
}
