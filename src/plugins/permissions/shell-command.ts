import { analyseCommand } from './shell-analysis.ts';
import type { ShellWord } from './shell-words.ts';
import { splitWords } from './shell-words.ts';

/** One simple command of a shell command line. */
export interface ShellPart {
  /** The command as written (quotes kept), whitespace collapsed: what allow patterns match. */
  readonly raw: string;
  /** The command with quotes and escapes removed: what deny patterns match as well. */
  readonly plain: string;
  /** True when the command redirects output into a file (other than /dev/null or another descriptor). */
  readonly writesFile: boolean;
  /** True when the command runs code given as text (`eval`, `bash -c …`): never allowed by a rule. */
  readonly opaque: boolean;
  /** Every spelling a deny pattern is tried against: wrappers peeled, program paths cut to the name. */
  readonly spellings: readonly string[];
  /** Why what this command runs cannot be known before it runs (a computed program, stdin to a shell). */
  readonly undecidable?: string;
  /** True for a command another one runs (`bash -c`, `eval`, `find -exec`, `xargs`). */
  readonly nested: boolean;
}

/** A command line split into every simple command it would run, nested ones included. */
export interface ParsedShellCommand {
  readonly parts: readonly ShellPart[];
  /**
   * False when some construct was not understood (unbalanced quotes, here-documents, loops, function
   * definitions): such a command is never allowed by rules, only by a human.
   */
  readonly complete: boolean;
}

interface Draft {
  raw: string;
  plain: string;
  writesFile: boolean;
}

const reservedPrefixes = new Set([
  '!',
  'if',
  'then',
  'elif',
  'else',
  'do',
  'while',
  'until',
  '{',
  '}',
  'time',
]);
const reservedAlone = new Set(['fi', 'done', 'esac', '}', 'then', 'else', 'do', '{']);
const unparsedKeywords = new Set(['for', 'case', 'select', 'function', 'coproc']);

// Nested shells deeper than this are not followed (and count as undecidable).
const maxNesting = 8;

class Scanner {
  readonly parts: ShellPart[] = [];
  complete = true;
  index = 0;
  readonly source: string;
  readonly depth: number;
  readonly nested: boolean;

  constructor(source: string, depth = 0, nested = false) {
    this.source = source;
    this.depth = depth;
    this.nested = nested;
  }

  /** Scans commands until `end` (`)` or a backtick) or the end of input. */
  scanList(end: string | undefined): void {
    let draft: Draft = { raw: '', plain: '', writesFile: false };
    const flush = (): void => {
      this.#finish(draft);
      draft = { raw: '', plain: '', writesFile: false };
    };
    const source = this.source;
    while (this.index < source.length) {
      const char = source[this.index]!;
      const next = source[this.index + 1];
      if (end !== undefined && char === end) {
        this.index++;
        flush();
        return;
      }
      if (char === '\\') {
        if (next === '\n') {
          this.index += 2;
          continue;
        }
        draft.raw += char + (next ?? '');
        draft.plain += next ?? '';
        this.index += 2;
        continue;
      }
      if (char === "'") {
        const close = source.indexOf("'", this.index + 1);
        if (close === -1) {
          this.complete = false;
          draft.raw += source.slice(this.index);
          draft.plain += source.slice(this.index + 1);
          this.index = source.length;
          continue;
        }
        draft.raw += source.slice(this.index, close + 1);
        draft.plain += source.slice(this.index + 1, close);
        this.index = close + 1;
        continue;
      }
      if (char === '"') {
        this.#scanDoubleQuoted(draft);
        continue;
      }
      if (char === '`') {
        this.#scanNested(draft, 1, '`');
        continue;
      }
      if ((char === '$' || char === '<' || char === '>') && next === '(') {
        this.#scanNested(draft, 2, ')');
        continue;
      }
      if (char === '(') {
        if (draft.raw.trim() === '') {
          // A subshell: its commands are commands of this line.
          this.index++;
          this.scanList(')');
          continue;
        }
        this.complete = false;
        draft.raw += char;
        draft.plain += char;
        this.index++;
        continue;
      }
      if (char === ')') {
        this.complete = false;
        this.index++;
        flush();
        continue;
      }
      if (char === '#' && (draft.raw === '' || /\s$/.test(draft.raw))) {
        const lineEnd = source.indexOf('\n', this.index);
        this.index = lineEnd === -1 ? source.length : lineEnd;
        continue;
      }
      if (char === ';' || char === '\n' || char === '|') {
        this.index +=
          char === '|' && (next === '|' || next === '&') ? 2 : char === ';' && next === ';' ? 2 : 1;
        flush();
        continue;
      }
      if (char === '&') {
        if (next === '>') {
          this.#scanRedirect(draft, 2);
          continue;
        }
        this.index += next === '&' ? 2 : 1;
        flush();
        continue;
      }
      if (char === '>') {
        this.#scanRedirect(draft, next === '>' || next === '|' ? 2 : 1);
        continue;
      }
      if (char === '<' && next === '<') {
        if (source[this.index + 2] !== '<') this.complete = false; // a here-document
        draft.raw += '<<';
        draft.plain += '<<';
        this.index += 2;
        continue;
      }
      if (/\s/.test(char)) {
        if (draft.raw !== '' && !draft.raw.endsWith(' ')) {
          draft.raw += ' ';
          draft.plain += ' ';
        }
        this.index++;
        continue;
      }
      draft.raw += char;
      draft.plain += char;
      this.index++;
    }
    if (end !== undefined) this.complete = false;
    flush();
  }

  #scanNested(draft: Draft, openLength: number, end: string): void {
    const start = this.index;
    this.index += openLength;
    this.scanList(end);
    const text = this.source.slice(start, this.index);
    draft.raw += text;
    draft.plain += text;
  }

  #scanDoubleQuoted(draft: Draft): void {
    const source = this.source;
    draft.raw += '"';
    this.index++;
    while (this.index < source.length) {
      const char = source[this.index]!;
      const next = source[this.index + 1];
      if (char === '"') {
        draft.raw += '"';
        this.index++;
        return;
      }
      if (char === '\\' && next !== undefined && '"\\$`\n'.includes(next)) {
        draft.raw += char + next;
        if (next !== '\n') draft.plain += next;
        this.index += 2;
        continue;
      }
      if (char === '`') {
        this.#scanNested(draft, 1, '`');
        continue;
      }
      if (char === '$' && next === '(') {
        this.#scanNested(draft, 2, ')');
        continue;
      }
      draft.raw += char;
      draft.plain += char;
      this.index++;
    }
    this.complete = false;
  }

  // An output redirection: `>&2`, `>&-`, `2>&1` and `/dev/null` targets write no file.
  #scanRedirect(draft: Draft, operatorLength: number): void {
    const source = this.source;
    draft.raw += source.slice(this.index, this.index + operatorLength);
    draft.plain += source.slice(this.index, this.index + operatorLength);
    this.index += operatorLength;
    if (source[this.index] === '&' && operatorLength === 1) {
      draft.raw += '&';
      draft.plain += '&';
      this.index++;
      return;
    }
    while (this.index < source.length && (source[this.index] === ' ' || source[this.index] === '\t'))
      this.index++;
    const target = /^[^\s;&|()<>]*/.exec(source.slice(this.index))?.[0] ?? '';
    if (target !== '/dev/null' && !/^\d+$|^-$/.test(target)) draft.writesFile = true;
    draft.raw += ` ${target}`;
    draft.plain += ` ${target}`;
    this.index += target.length;
  }

  #finish(draft: Draft): void {
    let raw = draft.raw.trim();
    let plain = draft.plain.trim();
    for (;;) {
      const word = raw.split(' ')[0] ?? '';
      if (!reservedPrefixes.has(word) || raw === word) break;
      raw = raw.slice(word.length).trimStart();
      plain = plain.slice(plain.indexOf(' ') + 1).trimStart();
    }
    if (raw === '' || reservedAlone.has(raw)) return;
    // Redirections of a subshell (`(…) 2>&1`) are no command; one that writes a file stays, to be asked about.
    if (/^\d*[<>&]/.test(raw) && !draft.writesFile) return;
    const first = raw.split(' ')[0] ?? '';
    if (unparsedKeywords.has(first) || /^[A-Za-z_][\w-]*\s*\(\)/.test(raw)) this.complete = false;
    this.#addCommand(splitWords(raw), raw, plain, draft.writesFile, this.nested);
  }

  #addCommand(
    words: readonly ShellWord[],
    raw: string,
    plain: string,
    writesFile: boolean,
    nested: boolean,
  ): void {
    const analysis = analyseCommand(words);
    const tooDeep =
      this.depth >= maxNesting && (analysis.nestedLines.length > 0 || analysis.nestedWords.length > 0);
    const undecidable = tooDeep
      ? `commands are nested more than ${maxNesting} levels deep`
      : analysis.undecidable;
    this.parts.push({
      raw,
      plain,
      writesFile,
      opaque: analysis.opaque,
      spellings: analysis.spellings,
      nested,
      ...(undecidable !== undefined ? { undecidable } : {}),
    });
    if (tooDeep) return;
    for (const line of analysis.nestedLines) {
      const inner = new Scanner(line, this.depth + 1, true);
      inner.scanList(undefined);
      this.parts.push(...inner.parts);
      if (!inner.complete) this.complete = false;
    }
    for (const command of analysis.nestedWords) {
      const text = command.map((word) => word.raw).join(' ');
      const inner = new Scanner(text, this.depth + 1, true);
      inner.#addCommand(command, text, command.map((word) => word.value).join(' '), false, true);
      this.parts.push(...inner.parts);
      if (!inner.complete) this.complete = false;
    }
  }
}

/** Splits a shell command line into the simple commands it would run (`&&`, `||`, `;`, pipes, subshells, `$(…)`, backticks). */
export function parseShellCommand(command: string): ParsedShellCommand {
  const scanner = new Scanner(command);
  scanner.scanList(undefined);
  return { parts: scanner.parts, complete: scanner.complete };
}
