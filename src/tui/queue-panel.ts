import type { InboxTarget, UserMessage } from '../index.ts';
import { messageText } from '../index.ts';
import { truncateToWidth } from '@mariozechner/pi-tui';
import type { TuiTheme } from './tui-theme.ts';

/** A pending inbox message as the queue panel lists it. */
export interface QueuedEntry {
  readonly target: InboxTarget;
  readonly message: UserMessage;
}

/** The most queue rows shown at once. */
export const maxQueueRows = 5;

/**
 * The visible inbox: steering waiting for the next step and prompts queued for the next turn; when
 * focused, the selected row is highlighted and the keys to remove, send now or edit are shown.
 */
export function queueLines(options: {
  entries: readonly QueuedEntry[];
  selected: number | undefined;
  theme: TuiTheme;
  width: number;
}): string[] {
  const { entries, selected, theme: t, width } = options;
  if (entries.length === 0) return [];
  const focused = selected !== undefined;
  const hint = focused
    ? '↑↓ select · Del remove · Enter send now · e edit · Esc back'
    : 'Shift+Tab to edit the queue';
  const lines = [truncateToWidth(t.dim(`queued (${entries.length}) · ${hint}`), width)];
  const start = Math.max(0, Math.min((selected ?? 0) - maxQueueRows + 1, entries.length - maxQueueRows));
  for (let index = start; index < Math.min(entries.length, start + maxQueueRows); index++) {
    const entry = entries[index]!;
    const label = entry.target === 'next-step' ? 'next step' : 'next turn';
    const text = messageText(entry.message).replace(/\s*\n\s*/g, ' ⏎ ');
    const row = truncateToWidth(`  ${index + 1}. [${label}] ${text}`, width);
    lines.push(index === selected ? t.inverse(row) : row);
  }
  if (entries.length > start + maxQueueRows)
    lines.push(t.dim(`  … ${entries.length - start - maxQueueRows} more`));
  return lines;
}
