import type { EditorTheme, MarkdownTheme, SelectListTheme } from '@mariozechner/pi-tui';
import { highlightCode } from './code-highlight.ts';

/** A styling function: wraps text in SGR codes, or returns it unchanged without colour. */
export type Style = (text: string) => string;

/** The styles the TUI draws with; every one is the identity under `NO_COLOR`. */
export interface TuiTheme {
  readonly color: boolean;
  readonly dim: Style;
  readonly bold: Style;
  readonly italic: Style;
  readonly inverse: Style;
  readonly accent: Style;
  readonly user: Style;
  readonly success: Style;
  readonly warning: Style;
  readonly error: Style;
  readonly added: Style;
  readonly removed: Style;
  readonly hunk: Style;
  readonly markdown: MarkdownTheme;
  readonly editor: EditorTheme;
}

function sgr(open: string, close: string): Style {
  return (text) => `\x1b[${open}m${text}\x1b[${close}m`;
}

const identity: Style = (text) => text;

/** The theme for an environment: colour unless `NO_COLOR` is set (to anything) or `TERM=dumb`. */
export function tuiTheme(env: Readonly<Record<string, string | undefined>>): TuiTheme {
  const color = env.NO_COLOR === undefined && env.TERM !== 'dumb';
  const pick = (style: Style): Style => (color ? style : identity);
  const dim = pick(sgr('2', '22'));
  const bold = sgr('1', '22');
  const italic = sgr('3', '23');
  const inverse = sgr('7', '27');
  const accent = pick(sgr('36', '39'));
  const warning = pick(sgr('33', '39'));
  const selectList: SelectListTheme = {
    selectedPrefix: color ? accent : (text) => text,
    selectedText: color ? bold : inverse,
    description: dim,
    scrollInfo: dim,
    noMatch: dim,
  };
  const markdown: MarkdownTheme = {
    heading: (text) => bold(accent(text)),
    link: pick(sgr('4', '24')),
    linkUrl: dim,
    code: warning,
    codeBlock: identity,
    codeBlockBorder: dim,
    quote: italic,
    quoteBorder: dim,
    hr: dim,
    listBullet: accent,
    bold,
    italic,
    strikethrough: sgr('9', '29'),
    underline: sgr('4', '24'),
    highlightCode: (code, language) => highlightCode(code, language, color),
  };
  return {
    color,
    dim,
    bold,
    italic,
    inverse,
    accent,
    user: pick(sgr('1;34', '22;39')),
    success: pick(sgr('32', '39')),
    warning,
    error: pick(sgr('31', '39')),
    added: pick(sgr('32', '39')),
    removed: pick(sgr('31', '39')),
    hunk: pick(sgr('36', '39')),
    markdown,
    editor: { borderColor: dim, selectList },
  };
}
