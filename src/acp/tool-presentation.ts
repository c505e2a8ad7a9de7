import { isAbsolute, resolve } from 'node:path';
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import type { ContentBlock, Tool, ToolCategory } from '../internal.ts';
import { parseToolArguments } from '../internal.ts';

/** How one call shows in an editor: title, kind, locations, proposed diffs and raw input. */
export interface ToolPresentation {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  diffs: ToolCallContent[];
  rawInput: unknown;
}

const kindOfCategory: Readonly<Record<ToolCategory, ToolKind>> = {
  read: 'read',
  edit: 'edit',
  search: 'search',
  execute: 'execute',
  fetch: 'fetch',
  think: 'think',
  other: 'other',
};

const kindOfEffect: Readonly<Record<NonNullable<Tool['effect']>, ToolKind>> = {
  read: 'read',
  write: 'edit',
  execute: 'execute',
  other: 'other',
};

/** The ACP tool kind a tool declares: its `category`, else its `effect`, else `other`. */
export function toolKindOf(tool: Tool | undefined): ToolKind {
  if (tool?.category !== undefined) return kindOfCategory[tool.category];
  return kindOfEffect[tool?.effect ?? 'other'];
}

function absolute(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

// A tool's declarations may throw on arguments the model got wrong; the call then shows by name only.
function declared<T>(read: () => T | undefined, fallback: T): T {
  try {
    return read() ?? fallback;
  } catch {
    // Arguments the declaration cannot read: nothing to show beyond the tool's name.
    return fallback;
  }
}

/** Presents a call from its tool's declared properties (`category`, `paths`, `command`, `edits`). */
export function presentToolCall(
  tool: Tool | undefined,
  name: string,
  rawArguments: string,
  cwd: string,
): ToolPresentation {
  const args = parseToolArguments(rawArguments);
  const paths = declared(() => tool?.paths?.(args as never), [] as string[]);
  const command = declared(() => tool?.command?.(args as never), undefined as string | undefined);
  const edits = declared(() => tool?.edits?.(args as never), []);
  const shown = command ?? (paths.length > 0 ? `${name} ${paths.join(', ')}` : name);
  return {
    title: shown.length > 200 ? `${shown.slice(0, 199)}…` : shown,
    kind: toolKindOf(tool),
    locations: paths.map((path) => ({ path: absolute(cwd, path) })),
    diffs: edits.map((edit) => ({
      type: 'diff',
      path: absolute(cwd, edit.path),
      newText: edit.newText,
      ...(edit.oldText !== undefined ? { oldText: edit.oldText } : {}),
    })),
    rawInput: args,
  };
}

/** The text of a tool result's blocks (images are named, not inlined). */
export function resultText(content: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of content) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'tool-result') parts.push(resultText(block.content));
    else if (block.type === 'image') parts.push(`[image ${block.mediaType}]`);
  }
  return parts.join('\n');
}

/** A result as editor content: fenced output for commands, the diffs for successful edits, else text. */
export function resultContent(
  presentation: ToolPresentation,
  text: string,
  isError: boolean,
): ToolCallContent[] {
  if (!isError && presentation.diffs.length > 0) return presentation.diffs;
  if (text === '') return [];
  const shown = presentation.kind === 'execute' && !isError ? fence(text) : text;
  return [{ type: 'content', content: { type: 'text', text: shown } }];
}

function fence(text: string): string {
  let marker = '```';
  while (text.includes(marker)) marker += '`';
  return `${marker}console\n${text}\n${marker}`;
}
