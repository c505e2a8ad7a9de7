import type { ApprovalRequest } from '../index.ts';
import { truncateToWidth, wrapTextWithAnsi } from '@mariozechner/pi-tui';
import { diffBlock } from './transcript-lines.ts';
import type { TuiTheme } from './tui-theme.ts';

/** The keys of an approval, as the panel lists them. */
export const approvalKeys = '[y] allow once  [a] allow for this session  [n] deny with a reason  [Esc] stop';

/**
 * The inline approval: which tool, why it asks, and what it would change (the diff of a write or edit,
 * the request's `preview`) before the decision; other calls show their arguments, pretty-printed.
 */
export function approvalLines(options: {
  request: ApprovalRequest;
  count: number;
  mainSession: string;
  theme: TuiTheme;
  width: number;
  maxLines: number;
}): string[] {
  const { request, theme: t, width } = options;
  const who = request.sessionId === options.mainSession ? '' : ` (subagent ${request.sessionId.slice(0, 8)})`;
  const of = options.count > 1 ? ` · 1 of ${options.count}` : '';
  const head = [
    t.warning('─'.repeat(width)),
    truncateToWidth(`${t.warning('?')} Allow ${t.bold(request.name)}${who}?${t.dim(of)}`, width),
  ];
  if (request.reason !== undefined) {
    for (const line of wrapTextWithAnsi(`reason: ${request.reason}`, width - 2)) head.push(`  ${line}`);
  }
  const body: string[] = [];
  // The pipeline asks the tool for its preview (a write's or an edit's diff) before the question.
  const preview = request.preview;
  if (preview !== undefined) {
    body.push(t.dim(`  ${preview.created ? 'new file' : 'changes'} ${preview.path}`));
    body.push(...diffBlock(preview.diff, width, t, Number.POSITIVE_INFINITY));
  } else {
    for (const line of prettyArguments(request.arguments).split('\n')) {
      body.push(truncateToWidth(`  ${line}`, width));
    }
  }
  const foot = [truncateToWidth(t.accent(approvalKeys), width)];
  const room = Math.max(1, options.maxLines - head.length - foot.length);
  const shown =
    body.length <= room
      ? body
      : [...body.slice(0, room - 1), t.dim(`  … ${body.length - room + 1} more lines`)];
  return [...head, ...shown, ...foot];
}

/** Arguments as indented JSON (strings shown with real newlines), or as the model wrote them. */
export function prettyArguments(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2).replace(/\\n/g, '\n    ');
  } catch {
    // Unparsable arguments are shown exactly as the model wrote them.
    return raw;
  }
}
