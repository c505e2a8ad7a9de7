import { readFile, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** A user-defined prompt template: `/name arguments` sends its body with `$ARGUMENTS` filled in. */
export interface PromptTemplate {
  readonly name: string;
  readonly description: string;
  readonly body: string;
  /** The file it was read from. */
  readonly file: string;
}

/** The folders templates are read from, in precedence order (a name found earlier wins). */
export const templateFolders: readonly string[] = ['.rein/commands', '.claude/commands', '.agents/commands'];

/** Reads the `*.md` templates of a workspace's template folders; unreadable folders are skipped. */
export async function loadPromptTemplates(workspace: string): Promise<PromptTemplate[]> {
  const found = new Map<string, PromptTemplate>();
  for (const folder of templateFolders) {
    const directory = join(workspace, folder);
    let names: string[];
    try {
      names = (await readdir(directory)).filter((name) => name.endsWith('.md')).sort();
    } catch {
      // A workspace without this folder simply has no templates there.
      continue;
    }
    for (const name of names) {
      const command = basename(name, '.md');
      if (found.has(command) || !/^[\w.-]+$/.test(command)) continue;
      const file = join(directory, name);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch {
        // A template that vanished or is unreadable is left out of the list.
        continue;
      }
      found.set(command, { name: command, file, ...parseTemplate(text) });
    }
  }
  return [...found.values()];
}

/** Splits a template into its front-matter description (or first line) and its body. */
export function parseTemplate(text: string): { description: string; body: string } {
  let body = text;
  let description: string | undefined;
  const front = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (front !== null) {
    body = text.slice(front[0].length);
    const line = /^description:\s*(.+)$/m.exec(front[1]!);
    if (line !== null) description = line[1]!.trim().replace(/^["']|["']$/g, '');
  }
  description ??=
    body
      .trim()
      .split('\n')[0]
      ?.replace(/^#+\s*/, '')
      .slice(0, 80) ?? '';
  return { description, body };
}

/** The prompt a template sends: `$ARGUMENTS` replaced, or the arguments appended when it has none. */
export function expandTemplate(template: PromptTemplate, args: string): string {
  const trimmed = args.trim();
  const body = template.body.trim();
  if (body.includes('$ARGUMENTS')) return body.split('$ARGUMENTS').join(trimmed);
  return trimmed === '' ? body : `${body}\n\n${trimmed}`;
}
