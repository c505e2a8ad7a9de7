import hljs from 'highlight.js/lib/common';

// highlight.js scopes (its class names without `hljs-`) and the SGR colour each is drawn in.
const scopeColors: Readonly<Record<string, string>> = {
  keyword: '35',
  built_in: '36',
  type: '36',
  literal: '36',
  number: '33',
  string: '32',
  regexp: '32',
  comment: '2',
  doctag: '2',
  meta: '2',
  title: '34',
  'title.function': '34',
  'title.class': '34',
  function: '34',
  attr: '33',
  attribute: '33',
  variable: '31',
  params: '0',
  symbol: '33',
  tag: '34',
  name: '34',
  section: '1',
  addition: '32',
  deletion: '31',
};

const entities: Readonly<Record<string, string>> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#x27;': "'",
  '&#39;': "'",
};

function unescape(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (entity) => entities[entity] ?? entity);
}

/**
 * Highlights a code block for the terminal: one string per source line, each line carrying its own
 * colours (styles never run across lines). Plain lines without colour or for an unknown language.
 */
export function highlightCode(code: string, language: string | undefined, color: boolean): string[] {
  const lines = code.split('\n');
  if (!color) return lines;
  let html: string;
  try {
    html =
      language !== undefined && hljs.getLanguage(language) !== undefined
        ? hljs.highlight(code, { language, ignoreIllegals: true }).value
        : hljs.highlightAuto(code).value;
  } catch {
    // A grammar that fails on this input leaves the block plain.
    return lines;
  }
  const out: string[] = [];
  const stack: string[] = [];
  let line = '';
  const open = (): string => stack.map((code) => `\x1b[${code}m`).join('');
  for (const token of html.split(/(<span class="[^"]*">|<\/span>|\n)/)) {
    if (token === '') continue;
    if (token === '\n') {
      out.push(`${line}\x1b[0m`);
      line = open();
    } else if (token.startsWith('<span')) {
      const scope = /class="hljs-([^" ]+)/.exec(token)?.[1] ?? '';
      const colorCode = scopeColors[scope] ?? scopeColors[scope.split('.')[0] ?? ''] ?? '0';
      stack.push(colorCode);
      line += `\x1b[${colorCode}m`;
    } else if (token === '</span>') {
      stack.pop();
      line += `\x1b[0m${open()}`;
    } else line += unescape(token);
  }
  out.push(`${line}\x1b[0m`);
  return out;
}
