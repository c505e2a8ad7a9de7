import type { AutocompleteItem, AutocompleteProvider, AutocompleteSuggestions } from '@mariozechner/pi-tui';
import { fuzzyFilter } from '@mariozechner/pi-tui';

/** How many suggestions a completion offers. */
const maxSuggestions = 30;

/**
 * Completion in the composer: `/` at the start of the message completes command and template names;
 * `@` at a word start completes workspace files (listed once, gitignored ones left out, fuzzy-matched).
 */
export class ComposerCompletion implements AutocompleteProvider {
  readonly #commands: () => readonly AutocompleteItem[];
  readonly #files: (signal: AbortSignal) => Promise<readonly string[]>;

  constructor(options: {
    commands: () => readonly AutocompleteItem[];
    files: (signal: AbortSignal) => Promise<readonly string[]>;
  }) {
    this.#commands = options.commands;
    this.#files = options.files;
  }

  async getSuggestions(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    options: { signal: AbortSignal; force?: boolean },
  ): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? '').slice(0, cursorCol);
    if (cursorLine === 0 && /^\/\S*$/.test(before)) {
      const typed = before.slice(1);
      const items = this.#commands().filter((item) => item.value.startsWith(typed));
      return items.length > 0 ? { items: items.slice(0, maxSuggestions), prefix: before } : null;
    }
    const mention = /(?:^|\s)(@\S*)$/.exec(before)?.[1];
    if (mention === undefined) return null;
    const files = await this.#files(options.signal);
    if (options.signal.aborted) return null;
    const query = mention.slice(1);
    const matched =
      query === '' ? files.slice(0, maxSuggestions) : fuzzyFilter([...files], query, (file) => file);
    if (matched.length === 0) return null;
    return {
      items: matched.slice(0, maxSuggestions).map((file) => ({ value: `@${quoted(file)}`, label: file })),
      prefix: mention,
    };
  }

  applyCompletion(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    item: AutocompleteItem,
    prefix: string,
  ): { lines: string[]; cursorLine: number; cursorCol: number } {
    const line = lines[cursorLine] ?? '';
    const start = cursorCol - prefix.length;
    const replacement = prefix.startsWith('/') ? `/${item.value} ` : `${item.value} `;
    const next = [...lines];
    next[cursorLine] = line.slice(0, start) + replacement + line.slice(cursorCol);
    return { lines: next, cursorLine, cursorCol: start + replacement.length };
  }

  shouldTriggerFileCompletion(lines: string[], cursorLine: number, cursorCol: number): boolean {
    return /(?:^|\s)@\S*$/.test((lines[cursorLine] ?? '').slice(0, cursorCol));
  }
}

function quoted(path: string): string {
  return /\s/.test(path) ? `"${path}"` : path;
}
