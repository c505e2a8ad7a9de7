import { useLayoutEffect, useRef } from 'preact/hooks';
import { addCopyButtons, highlightWithin, renderMarkdown } from '../markdown.ts';
import { StreamingMarkdown } from '../streaming-markdown.ts';

/** Markdown rendered inert: sanitized HTML only, code highlighted after mount. */
export function MarkdownView({ text }: { text: string }) {
  return <MarkdownHtml class="markdown" html={renderMarkdown(text)} />;
}

// Answers longer than this render block by block even when complete, as they did while streaming.
const wholeParseLimit = 100_000;
// How long one frame may spend inserting completed blocks; the rest waits for the next frame.
const blockBudgetMs = 8;

/**
 * Markdown that is still growing (a streaming answer), or very long: rendered one top-level block at a
 * time into an element this component leaves to `StreamingMarkdown`, so a frame costs the new text,
 * not the whole answer (nothing re-diffs the blocks already shown).
 */
export function GrowingMarkdownView({ text, streaming }: { text: string; streaming: boolean }) {
  if (!streaming && text.length <= wholeParseLimit) return <MarkdownView text={text} />;
  return <BlockMarkdownView text={text} complete={!streaming} />;
}

function BlockMarkdownView({ text, complete }: { text: string; complete: boolean }) {
  const element = useRef<HTMLDivElement>(null);
  const view = useRef<StreamingMarkdown | undefined>(undefined);
  const latest = useRef({ text, complete });
  latest.current = { text, complete };
  useLayoutEffect(() => {
    if (element.current === null) return undefined;
    const markdown = (view.current ??= new StreamingMarkdown(element.current));
    let frame: number | undefined;
    // Blocks left over when the budget ran out go in during the next frames, with the text by then.
    const render = (): void => {
      frame = undefined;
      const { text: current, complete: done } = latest.current;
      if (!markdown.update(current, performance.now() + blockBudgetMs, done))
        frame = requestAnimationFrame(render);
    };
    render();
    return () => {
      if (frame !== undefined) cancelAnimationFrame(frame);
    };
  }, [text, complete]);
  // No children: the blocks in this element are `StreamingMarkdown`'s, inserted once each.
  return <div class="markdown markdown-growing" ref={element} />;
}

function MarkdownHtml({ html, class: className }: { html: string; class: string }) {
  const element = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (element.current === null) return;
    highlightWithin(element.current);
    addCopyButtons(element.current);
  }, [html]);
  // The HTML is DOMPurify's output, never the raw model text.
  return <div class={className} ref={element} dangerouslySetInnerHTML={{ __html: html }} />;
}
