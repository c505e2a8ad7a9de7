import type { ContentBlock, LlmFailure, ToolCard, TranscriptItem, TurnEndReason } from '../index.ts';
import { messageText } from '../index.ts';
import { truncateToWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import { MarkdownLines } from './markdown-lines.ts';
import type { ScreenItem } from './screen-item.ts';
import type { TuiTheme } from './tui-theme.ts';

/** How many lines of a tool's output its card shows (the rest is counted, never drawn). */
export const toolOutputLines = 8;
/** How many lines of a diff a card shows. */
export const diffLines = 24;
// Where an answer's markdown goes among its other lines.
const markdownMarker = '\u0000markdown';

/** How many lines of streaming reasoning stay visible before it is folded. */
const reasoningLines = 4;

/** What the cards need to know about tools: the argument that names a call (a path, a command). */
export interface CallDescriber {
  keyArgument(name: string, rawArguments: string): string | undefined;
}

/**
 * Renders transcript items as terminal lines, caching each item's lines until the transcript reports it
 * changed (`invalidate`) or the width changes.
 */
export class TranscriptLines {
  readonly #theme: TuiTheme;
  readonly #calls: CallDescriber;
  readonly #cache = new Map<string, { width: number; lines: string[] }>();
  readonly #markdown = new Map<string, MarkdownLines>();

  constructor(theme: TuiTheme, calls: CallDescriber) {
    this.#theme = theme;
    this.#calls = calls;
  }

  /** Forgets the cached lines of items that changed. */
  invalidate(items: Iterable<ScreenItem>): void {
    for (const item of items) this.#cache.delete(item.key);
  }

  /** Forgets everything (a different session). */
  clear(): void {
    this.#cache.clear();
    this.#markdown.clear();
  }

  /** The lines of one item at a width (each fits the width), cached. */
  linesOf(item: ScreenItem, width: number): readonly string[] {
    const cached = this.#cache.get(item.key);
    if (cached !== undefined && cached.width === width) return cached.lines;
    const rendered = this.#render(item, width);
    // An answer's markdown lines are fitted as they are rendered (once per block): not again per frame.
    const lines = item.kind === 'assistant' ? rendered : rendered.map((line) => truncateToWidth(line, width));
    this.#cache.set(item.key, { width, lines });
    return lines;
  }

  #render(item: ScreenItem, width: number): string[] {
    const t = this.#theme;
    switch (item.kind) {
      case 'local': {
        const style = item.tone === 'error' ? t.error : t.dim;
        return ['', ...wrap(item.text, width - 2).map((line) => style(`  ${line}`))];
      }
      case 'turn-start':
        return [];
      case 'user': {
        const marker =
          item.source === 'user' ? '›' : item.source === 'steer' ? '» steer' : `[${item.source}]`;
        const style = item.source === 'user' || item.source === 'steer' ? t.user : t.dim;
        const text = item.text === '' ? describeBlocks(item.message.content) : item.text;
        if (item.source !== 'user' && item.source !== 'steer') {
          return ['', style(`${marker} ${oneLine(text).slice(0, width * 2)}`)];
        }
        const body = wrap(text, width - 2);
        return ['', ...body.map((line, index) => (index === 0 ? `${style(marker)} ${line}` : `  ${line}`))];
      }
      case 'assistant':
        return this.#assistant(item, width);
      case 'tool':
        return this.#tool(item, width);
      case 'turn-end':
        return this.#turnEnd(item.turn, item.reason, width);
      case 'request-failed':
        return [t.error(`  ! request failed — ${describeFailure(item.failure)}`)];
      case 'retry':
        return [
          t.warning(
            `  ↻ retry ${item.attempt} in ${(item.delayMs / 1000).toFixed(1)}s — ${describeFailure(item.failure)}`,
          ),
        ];
      case 'cancelled':
        return [t.warning(`  ■ ${item.text}`)];
      case 'compaction': {
        if (item.state === 'running') return [t.dim('  ⋯ compacting the conversation…')];
        if (item.state === 'failed') {
          return [t.error(`  ⋯ compaction failed — ${item.error?.code ?? ''}: ${item.error?.message ?? ''}`)];
        }
        const parts: string[] = [];
        if (item.summary !== undefined) {
          parts.push(
            `${item.summary.shadowedTokens} tokens of history became a ${item.summary.summaryTokens}-token summary`,
          );
        }
        if (item.prune !== undefined)
          parts.push(`${item.prune.results} oversized tool results were shortened`);
        return [t.dim(`  ⋯ compacted: ${parts.join('; ') || 'nothing to do'}`)];
      }
      case 'record': {
        const style = item.tone === 'stopped' ? t.warning : item.tone === 'success' ? t.success : t.accent;
        return wrap(item.text, width - 4).map((line, index) =>
          style(`${index === 0 ? '  ◆ ' : '    '}${line}`),
        );
      }
      case 'event':
        return [t.dim(`  · ${item.type}`)];
    }
  }

  #assistant(item: Extract<TranscriptItem, { kind: 'assistant' }>, width: number): string[] {
    const t = this.#theme;
    const lines: string[] = [];
    let markdown = this.#markdown.get(item.key);
    if (markdown === undefined) {
      markdown = new MarkdownLines(t.markdown, '  ');
      this.#markdown.set(item.key, markdown);
    }
    const reasoning = item.blocks
      .filter((block) => block.type === 'reasoning')
      .map((block) => (block.type === 'reasoning' ? block.text : ''))
      .join('');
    const text = messageText({ content: item.blocks });
    const thinkingNow = item.streaming && text === '' && reasoning !== '';
    if (reasoning.trim() !== '') {
      if (thinkingNow) {
        const tail = wrap(reasoning.trim(), width - 4).slice(-reasoningLines);
        lines.push(t.dim(t.italic('  ∴ thinking…')));
        for (const line of tail) lines.push(t.dim(t.italic(`    ${line}`)));
      } else {
        const words = reasoning.trim().split(/\s+/).length;
        lines.push(t.dim(t.italic(`  ∴ thought (${words} ${words === 1 ? 'word' : 'words'}, folded)`)));
      }
    }
    if (text.trim() !== '') lines.push('', markdownMarker);
    if (item.interrupted) lines.push(t.warning('  (the answer was cut off)'));
    if (item.failed) lines.push(t.error('  (this attempt failed)'));
    const markdownStart = lines.indexOf(markdownMarker);
    if (markdownStart < 0) return lines.map((line) => truncateToWidth(line, width));
    return [
      ...lines.slice(0, markdownStart).map((line) => truncateToWidth(line, width)),
      ...markdown.render(text, width),
      ...lines.slice(markdownStart + 1).map((line) => truncateToWidth(line, width)),
    ];
  }

  #tool(card: ToolCard, width: number): string[] {
    const t = this.#theme;
    const key = this.#calls.keyArgument(card.name, card.arguments);
    const status = statusOf(card, t);
    const head = `${t.accent('●')} ${t.bold(card.name)}${key !== undefined ? ` ${oneLine(key)}` : ''}`;
    const lines = ['', fitWithRight(head, status, width)];
    if (card.approval?.decision !== undefined && card.approval.decision !== 'allow-once') {
      const reason = card.approval.decisionReason !== undefined ? `: ${card.approval.decisionReason}` : '';
      lines.push(t.dim(`  ⎿ approval: ${card.approval.decision}${reason}`));
    }
    const result = card.result;
    if (result === undefined) return lines;
    const meta = (typeof result.meta === 'object' && result.meta !== null ? result.meta : {}) as Record<
      string,
      unknown
    >;
    if (typeof meta.diff === 'string' && !result.isError) {
      lines.push(...diffBlock(meta.diff, width, t));
      return lines;
    }
    const output = result.text.replace(/\n+$/, '').split('\n');
    const total =
      typeof meta.outputLines === 'number' ? Math.max(meta.outputLines, output.length) : output.length;
    const shown = output.slice(0, toolOutputLines);
    const style = result.isError ? t.error : t.dim;
    for (const line of shown) lines.push(style(`  │ ${line.replace(/\t/g, '  ')}`));
    if (total > shown.length) {
      const spilled = typeof meta.outputFile === 'string' ? ` · full output in ${meta.outputFile}` : '';
      lines.push(t.dim(`  │ … ${total - shown.length} more lines${spilled}`));
    }
    return lines;
  }

  #turnEnd(turn: number, reason: TurnEndReason, width: number): string[] {
    const t = this.#theme;
    const text = describeTurnEnd(reason);
    const style = reason.kind === 'completed' ? t.dim : reason.kind === 'aborted' ? t.warning : t.error;
    const label = ` turn ${turn} · ${text} `;
    const rule = '─'.repeat(Math.max(0, width - label.length - 2));
    return ['', style(`─${label}${rule}`)];
  }
}

/** How a turn ended, in words. */
export function describeTurnEnd(reason: TurnEndReason): string {
  switch (reason.kind) {
    case 'completed':
      return 'completed';
    case 'aborted':
      return 'aborted';
    case 'max-tokens':
      return 'stopped at the output limit';
    case 'blocked':
      return 'paused';
    case 'interrupted':
      return 'interrupted (the process ended mid-turn)';
    case 'error':
      return `error ${reason.error.code}: ${oneLine(reason.error.message)}`;
  }
}

function statusOf(card: ToolCard, t: TuiTheme): string {
  switch (card.state) {
    case 'requested':
      return t.dim('requested');
    case 'awaiting-approval':
      return t.warning('needs approval');
    case 'running':
      return t.accent('running…');
    case 'done': {
      const exit = exitCodeOf(card.result?.meta);
      if (exit !== undefined) return exit === 0 ? t.success('✓ exit 0') : t.error(`✗ exit ${exit}`);
      return t.success('✓ done');
    }
    case 'failed': {
      const exit = exitCodeOf(card.result?.meta);
      if (exit !== undefined) return t.error(`✗ exit ${exit}`);
      if (card.approval?.decision === 'deny') return t.error('✗ denied');
      if (card.result?.code !== undefined) return t.error(`✗ ${card.result.code}`);
      return t.error(card.result === undefined ? '✗ not run' : '✗ failed');
    }
  }
}

function exitCodeOf(meta: unknown): number | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const code = (meta as { exitCode?: unknown }).exitCode;
  return typeof code === 'number' ? code : undefined;
}

/** A unified diff as coloured, bounded card lines (the file header lines left out). */
export function diffBlock(diff: string, width: number, t: TuiTheme, limit = diffLines): string[] {
  const body = diff
    .split('\n')
    .filter((line) => !/^(=+|Index: |--- |\+\+\+ )/.test(line) && line !== '\\ No newline at end of file');
  while (body.length > 0 && body.at(-1) === '') body.pop();
  const lines: string[] = [];
  for (const line of body.slice(0, limit)) {
    const text = truncateToWidth(`  ${line.replace(/\t/g, '  ')}`, width);
    if (line.startsWith('+')) lines.push(t.added(text));
    else if (line.startsWith('-')) lines.push(t.removed(text));
    else if (line.startsWith('@@')) lines.push(t.hunk(text));
    else lines.push(t.dim(text));
  }
  if (body.length > limit) lines.push(t.dim(`  … ${body.length - limit} more diff lines`));
  return lines;
}

function fitWithRight(left: string, right: string, width: number): string {
  const rightWidth = visible(right);
  const room = width - rightWidth - 2;
  if (room < 10) return truncateToWidth(`${left}  ${right}`, width);
  const fitted = truncateToWidth(left, room);
  const gap = Math.max(2, width - visible(fitted) - rightWidth);
  return `${fitted}${' '.repeat(gap)}${right}`;
}

function visible(text: string): number {
  return [...text.replace(/\x1b\[[0-9;]*m/g, '')].length;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const line of text.replace(/\t/g, '  ').split('\n'))
    lines.push(...(line === '' ? [''] : wrapTextWithAnsi(line, Math.max(10, width))));
  return lines;
}

function describeFailure(failure: LlmFailure): string {
  return `${failure.code}: ${oneLine(failure.message)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function describeBlocks(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join(' ');
}
