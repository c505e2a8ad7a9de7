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
 * blocks rendered once each (parsing them straight into an inert document and sanitizing in place
 * measured slower: moving the nodes into the page costs more than parsing the HTML again).
 */
export function renderMarkdownInto(element: HTMLElement, text: string): void {
  // The HTML is the sanitizer's output, never the raw model text.
  element.innerHTML = purifier.sanitize(marked.parse(text) as string);
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
