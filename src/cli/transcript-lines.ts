import type {
  CompactionItem,
  RecordItem,
  RequestFailedItem,
  RetryItem,
  ToolCard,
  TranscriptImage,
  TurnEndReason,
} from '../index.ts';
import { formatBytes } from '../internal.ts';

const toneIcons: Readonly<Record<RecordItem['tone'], string>> = { info: '◎', success: '✓', stopped: '■' };

/** An attached image as one line: `[image: image/png, 12.3 KB]` (or its URL when it has no data). */
export function imageLine(image: TranscriptImage): string {
  const detail = image.bytes !== undefined ? formatBytes(image.bytes) : image.url;
  return `[image: ${image.mediaType}${detail !== undefined ? `, ${detail}` : ''}]`;
}

/** A module record's line: its view's sentence after an icon for its tone. */
export function recordLine(item: RecordItem): string {
  return `${toneIcons[item.tone]} ${item.text}`;
}

/** A durable event nothing describes: its type and a shortened JSON of its data. */
export function otherEventLine(type: string, data: unknown, max: number): string {
  return `· ${type} ${shorten(JSON.stringify(data) ?? '', max)}`;
}

/** The line announcing a tool call. */
export function toolCallLine(card: ToolCard, max: number): string {
  return `⏺ ${card.name} ${shorten(card.arguments, max)}`;
}

/** The line of a finished tool call: ✓ with its name, or ✗ with the error code and message. */
export function toolResultLine(card: ToolCard, options: { countLines: boolean; max: number }): string {
  const result = card.result;
  if (result === undefined) return `  ✗ ${card.name}: no result (the turn ended first)`;
  if (!result.isError) {
    if (!options.countLines) return `  ✓ ${card.name}`;
    const count = result.text === '' ? 0 : result.text.split('\n').length;
    return `  ✓ ${card.name} (${count} ${count === 1 ? 'line' : 'lines'})`;
  }
  const code = result.code !== undefined ? ` ${result.code}` : '';
  return `  ✗ ${card.name}${code}: ${shorten(result.text.replace(/^Error:\s*/, ''), options.max)}`;
}

/** A failed model request. */
export function requestFailedLine(item: RequestFailedItem): string {
  return `! request failed — ${item.failure.code}: ${oneLine(item.failure.message)}`;
}

/** A retry about to wait. */
export function retryLine(item: RetryItem): string {
  return `↻ retry ${item.attempt} in ${(item.delayMs / 1000).toFixed(1)}s after ${item.failure.code}`;
}

/** What a compaction did, one line per effect (or its failure). */
export function compactionLines(item: CompactionItem): string[] {
  const lines: string[] = [];
  if (item.summary !== undefined)
    lines.push(
      `⋯ older history was summarized (${item.summary.shadowedTokens} → ${item.summary.summaryTokens} tokens)`,
    );
  if (item.prune !== undefined)
    lines.push(
      `⋯ ${item.prune.results} oversized tool ${item.prune.results === 1 ? 'result was' : 'results were'} shortened ` +
        `(${item.prune.shadowedTokens} → ${item.prune.prunedTokens} tokens)`,
    );
  if (item.error !== undefined)
    lines.push(`! compaction failed — ${item.error.code}: ${oneLine(item.error.message)}`);
  return lines;
}

/** A one-line description of how a turn ended. */
export function describeTurnEnd(reason: TurnEndReason): string {
  switch (reason.kind) {
    case 'completed':
      return 'completed';
    case 'max-tokens':
      return 'the model stopped at its output limit (max-tokens)';
    case 'blocked':
      return 'the turn was stopped before its next model request (blocked)';
    case 'error':
      return `error ${reason.error.code}: ${oneLine(reason.error.message)}`;
    case 'aborted':
      return 'aborted';
    case 'interrupted':
      return 'interrupted';
  }
}

/** Text flattened to one line and cut at `max` characters. */
export function shorten(text: string, max: number): string {
  const flat = oneLine(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Text with its line breaks folded into spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
