import { useLayoutEffect, useRef } from 'preact/hooks';
import { addCopyButtons, highlightWithin, renderMarkdown } from '../markdown.ts';

/** Markdown rendered inert: sanitized HTML only, code highlighted after mount. */
export function MarkdownView({ text }: { text: string }) {
  const element = useRef<HTMLDivElement>(null);
  const html = renderMarkdown(text);
  useLayoutEffect(() => {
    if (element.current === null) return;
    highlightWithin(element.current);
    addCopyButtons(element.current);
  }, [html]);
  // The HTML is DOMPurify's output, never the raw model text.
  return <div class="markdown" ref={element} dangerouslySetInnerHTML={{ __html: html }} />;
}
