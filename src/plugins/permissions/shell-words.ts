/** One shell word of a simple command, after quote removal. */
export interface ShellWord {
  /** The word as written. */
  readonly raw: string;
  /** The word with quotes and escapes removed (expansions left as written). */
  readonly value: string;
  /** True when part of the word is expanded at run time (`$VAR`, `${…}`, `$(…)`, backticks). */
  readonly dynamic: boolean;
  /** True when the word holds an unquoted glob character (`*`, `?`, `[`). */
  readonly glob: boolean;
  /** True when any part of the word was quoted or escaped. */
  readonly quoted: boolean;
}

const ansiEscapes: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  v: '\v',
};

// The index just past a `$(…)` or backtick substitution starting at `start` (quotes inside respected).
function substitutionEnd(text: string, start: number): number {
  if (text[start] === '`') {
    let index = start + 1;
    while (index < text.length && text[index] !== '`') index += text[index] === '\\' ? 2 : 1;
    return Math.min(index + 1, text.length);
  }
  let depth = 0;
  let index = start + 1;
  while (index < text.length) {
    const char = text[index]!;
    if (char === '\\') {
      index += 2;
      continue;
    }
    if (char === "'") {
      const close = text.indexOf("'", index + 1);
      index = close === -1 ? text.length : close + 1;
      continue;
    }
    if (char === '(') depth++;
    if (char === ')') {
      depth--;
      if (depth === 0) return index + 1;
    }
    index++;
  }
  return text.length;
}

/**
 * Splits one simple command (as the line scanner collected it: whitespace collapsed, quotes kept) into
 * words, removing quotes and escapes the way the shell does and noting which words are expanded at run
 * time. Redirection operators and their targets are not words of the command and are dropped.
 */
export function splitWords(text: string): ShellWord[] {
  const words: ShellWord[] = [];
  let index = 0;
  while (index < text.length) {
    while (text[index] === ' ' || text[index] === '\t' || text[index] === '\n') index++;
    if (index >= text.length) break;
    const start = index;
    let value = '';
    let dynamic = false;
    let glob = false;
    let quoted = false;
    while (index < text.length && !/\s/.test(text[index]!)) {
      const char = text[index]!;
      const next = text[index + 1];
      if (char === '\\') {
        quoted = true;
        value += next ?? '';
        index += 2;
      } else if (char === "'") {
        quoted = true;
        const close = text.indexOf("'", index + 1);
        const end = close === -1 ? text.length : close;
        value += text.slice(index + 1, end);
        index = end + 1;
      } else if (char === '$' && next === "'") {
        quoted = true;
        index += 2;
        while (index < text.length && text[index] !== "'") {
          if (text[index] === '\\' && index + 1 < text.length) {
            const escaped = text[index + 1]!;
            value += ansiEscapes[escaped] ?? escaped;
            index += 2;
          } else value += text[index++];
        }
        index++;
      } else if (char === '"') {
        quoted = true;
        index++;
        while (index < text.length && text[index] !== '"') {
          const inner = text[index]!;
          if (inner === '\\' && index + 1 < text.length && '"\\$`'.includes(text[index + 1]!)) {
            value += text[index + 1];
            index += 2;
          } else if (inner === '`' || (inner === '$' && text[index + 1] === '(')) {
            dynamic = true;
            const end = substitutionEnd(text, inner === '`' ? index : index + 1);
            value += text.slice(index, end);
            index = end;
          } else {
            if (inner === '$' && /[A-Za-z_{@*#?$!0-9-]/.test(text[index + 1] ?? '')) dynamic = true;
            value += inner;
            index++;
          }
        }
        index++;
      } else if (char === '`' || (char === '$' && next === '(')) {
        dynamic = true;
        const end = substitutionEnd(text, char === '`' ? index : index + 1);
        value += text.slice(index, end);
        index = end;
      } else {
        if (char === '$' && /[A-Za-z_{@*#?$!0-9-]/.test(next ?? '')) dynamic = true;
        if (char === '*' || char === '?' || char === '[') glob = true;
        value += char;
        index++;
      }
    }
    words.push({ raw: text.slice(start, index), value, dynamic, glob, quoted });
  }
  const commandWords: ShellWord[] = [];
  for (let at = 0; at < words.length; at++) {
    const word = words[at]!;
    if (!word.quoted && /^\d*(?:>>?|>\||&>>?|<>?|<<<)$/.test(word.raw)) {
      at++;
      continue;
    }
    if (!word.quoted && /^\d*(?:[<>]&\d*-?|&>\S+|>>?\S+|<\S+)$/.test(word.raw)) continue;
    commandWords.push(word);
  }
  return commandWords;
}
