import { useLayoutEffect, useRef } from 'preact/hooks';
import { frameDeadline } from '../frame-budget.ts';
import { addCopyButtons, highlightWithin, renderMarkdown } from '../markdown.ts';
import { StreamingMarkdown } from '../streaming-markdown.ts';

/** Markdown rendered inert: sanitized HTML only, code highlighted after mount. */
export function MarkdownView({ text }: { text: string }) {
  return <MarkdownHtml class="markdown" html={renderMarkdown(text)} />;
}

// Answers longer than this render block by block even when complete, as they did while streaming.
const wholeParseLimit = 100_000;
// How long one frame may spend inserting completed blocks, shared by every render in the frame; the
// rest waits for the next frame.
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
  // The frame that continues the blocks left over when a budget ran out, if one is waiting.
  const frame = useRef<number | undefined>(undefined);
  // Brings the blocks up to the latest text; what the budget leaves goes in during the next frames.
  const render = (): void => {
    frame.current = undefined;
    if (element.current === null) return;
    const markdown = (view.current ??= new StreamingMarkdown(element.current));
    const { text: current, complete: done } = latest.current;
    if (!markdown.update(current, frameDeadline(blockBudgetMs), done))
      frame.current = requestAnimationFrame(render);
  };
  useLayoutEffect(() => {
    // A waiting frame renders the latest text: rendering here too would spend two budgets in one frame.
    if (frame.current === undefined) render();
  }, [text, complete]);
  useLayoutEffect(
    () => () => {
      if (frame.current !== undefined) cancelAnimationFrame(frame.current);
    },
    [],
  );
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
