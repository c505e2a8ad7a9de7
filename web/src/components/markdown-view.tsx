import { memo } from 'preact/compat';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { MarkdownBlockSplitter } from '../markdown-blocks.ts';
import { addCopyButtons, highlightWithin, renderMarkdown } from '../markdown.ts';

/** Markdown rendered inert: sanitized HTML only, code highlighted after mount. */
export function MarkdownView({ text }: { text: string }) {
  return <MarkdownHtml class="markdown" html={renderMarkdown(text)} />;
}

// Answers longer than this render block by block even when complete, as they did while streaming.
const wholeParseLimit = 100_000;

/**
 * Markdown that is still growing (a streaming answer), or very long: rendered one top-level block at a
 * time. Completed blocks are parsed once and never re-rendered; only the open tail is parsed again as
 * text arrives, so a frame costs the new text, not the whole answer.
 */
export function GrowingMarkdownView({ text, streaming }: { text: string; streaming: boolean }) {
  const splitter = useRef<MarkdownBlockSplitter | undefined>(undefined);
  if (!streaming && text.length <= wholeParseLimit) return <MarkdownView text={text} />;
  splitter.current ??= new MarkdownBlockSplitter();
  const tail = splitter.current.update(text);
  const blocks = splitter.current.blocks;
  return (
    <div class="markdown markdown-growing">
      {blocks.map((block, index) => (
        <MarkdownBlock key={index} text={block} />
      ))}
      {tail.trim() !== '' && <MarkdownHtml class="markdown-block" html={renderMarkdown(tail, false)} />}
    </div>
  );
}

const MarkdownBlock = memo(function MarkdownBlock({ text }: { text: string }) {
  return <MarkdownHtml class="markdown-block" html={renderMarkdown(text, false)} />;
});

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
