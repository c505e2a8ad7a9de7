import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdownLanguage from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';

for (const [name, language] of Object.entries({
  bash,
  css,
  diff,
  go,
  javascript,
  json,
  markdown: markdownLanguage,
  python,
  rust,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language);
}
hljs.registerAliases(['sh', 'shell', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['md'], { languageName: 'markdown' });

const marked = new Marked({ gfm: true, breaks: false, async: false });

const policy = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
  FORBID_ATTR: ['style'],
};

// This app's sanitizer: its policy is parsed once (`setConfig`), not on every call — a streaming
// answer sanitizes each of its blocks, and parsing the policy cost more than sanitizing a paragraph.
const purifier = DOMPurify(window);
purifier.setConfig(policy);
// Every link leaves the app in a new, unlinked tab; the sanitizer has already removed unsafe URLs.
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

const cache = new Map<string, string>();

/** Markdown to sanitized HTML (DOMPurify, no scripts, handlers, forms or javascript: URLs), memoized. */
export function renderMarkdown(text: string): string {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const raw = marked.parse(text) as string;
  const safe = purifier.sanitize(raw);
  if (cache.size > 400) cache.delete(cache.keys().next().value!);
  cache.set(text, safe);
  return safe;
}

/**
 * Renders markdown into `element`, replacing its children: `renderMarkdown` without its memo, for
 * text re-rendered as it grows (a streaming answer's open tail). Parsing straight into an inert
 * document and sanitizing in place measured slower: moving the nodes into the page costs more than
 * parsing the HTML again.
 */
export function renderMarkdownInto(element: HTMLElement, text: string): void {
  // The HTML is the sanitizer's output, never the raw model text.
  element.innerHTML = purifier.sanitize(marked.parse(text) as string);
}

/**
 * Renders completed top-level markdown blocks into one `markdown-block` element each, with the nodes
 * `renderMarkdownInto` gives each block alone, for fewer parses: consecutive blocks without raw HTML
 * share one sanitize and one HTML parse (marked's own markup is balanced, so each block parses to the
 * same nodes inside its wrapper), and a block with raw HTML is rendered alone, so markup it leaves open
 * cannot reach its neighbours. The elements are not in the page yet; code is highlighted, with copy buttons.
 */
export function renderMarkdownBlocks(texts: readonly string[]): HTMLElement[] {
  const elements: HTMLElement[] = [];
  let batch: string[] = [];
  const flush = (): void => {
    if (batch.length === 0) return;
    const container = document.createElement('div');
    // The HTML is the sanitizer's output, never the raw model text.
    container.innerHTML = purifier.sanitize(batch.join(''));
    const wrappers = [...container.children] as HTMLElement[];
    batch = [];
    elements.push(...wrappers);
  };
  for (const text of texts) {
    const tokens = marked.lexer(text);
    let raw = false;
    // Synchronous: the callback returns nothing, so the array of its results is empty.
    void marked.walkTokens(tokens, (token) => {
      if (token.type === 'html') raw = true;
    });
    const html = marked.parser(tokens);
    if (raw) {
      flush();
      const element = document.createElement('div');
      element.className = 'markdown-block';
      element.innerHTML = purifier.sanitize(html);
      elements.push(element);
    } else batch.push(`<div class="markdown-block">${html}</div>`);
  }
  flush();
  for (const element of elements) {
    highlightWithin(element);
    addCopyButtons(element);
  }
  return elements;
}

/** Highlights the code blocks inside an element (highlight.js escapes what it writes). */
export function highlightWithin(element: HTMLElement): void {
  for (const code of element.querySelectorAll<HTMLElement>('pre code')) {
    if (code.dataset.highlighted === 'yes') continue;
    const language = /language-([\w-]+)/.exec(code.className)?.[1];
    if (language !== undefined && hljs.getLanguage(language) !== undefined) hljs.highlightElement(code);
    else code.dataset.highlighted = 'yes';
  }
}

/** Puts a "Copy" button on each code block inside an element (built here, after sanitizing, never from model HTML). */
export function addCopyButtons(element: HTMLElement): void {
  for (const pre of element.querySelectorAll<HTMLElement>('pre')) {
    const code = pre.querySelector('code');
    if (code === null || pre.querySelector(':scope > .copy-code') !== null) continue;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy-code';
    button.dataset.testid = 'copy-code';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', 'Copy the code');
    button.addEventListener('click', () => {
      void copyText(code.textContent ?? '').then((copied) => {
        button.textContent = copied ? 'Copied' : 'Copy failed';
        setTimeout(() => (button.textContent = 'Copy'), 1500);
      });
    });
    pre.append(button);
  }
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard permission (or an insecure context): fall back to a selection copy.
    const area = document.createElement('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    const copied = document.execCommand('copy');
    area.remove();
    return copied;
  }
}
