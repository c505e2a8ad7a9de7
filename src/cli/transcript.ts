import type {
  AnySessionEvent,
  AssistantItem,
  SessionHeader,
  ToolCard,
  TranscriptItem,
  UserItem,
} from '../index.ts';
import { Transcript, defaultRecordViews } from '../index.ts';
import {
  compactionLines,
  describeTurnEnd,
  imageLine,
  otherEventLine,
  recordLine,
  requestFailedLine,
  retryLine,
  shorten,
  toolCallLine,
  toolResultLine,
} from './transcript-lines.ts';

/** Renders a stored session as a readable transcript: prompts, answers, tool calls and how turns ended. */
export function renderTranscript(header: SessionHeader, events: readonly AnySessionEvent[]): string {
  const lines: string[] = [];
  lines.push(`session ${header.id}`);
  if (header.title !== undefined) lines.push(`title    ${header.title}`);
  if (header.cwd !== undefined) lines.push(`cwd      ${header.cwd}`);
  lines.push(`created  ${new Date(header.createdAt).toISOString()}`);
  if (header.parentSession !== undefined) {
    lines.push(`parent   ${header.parentSession}${header.origin !== undefined ? ` (${header.origin})` : ''}`);
  }
  for (const item of Transcript.of(events, { views: defaultRecordViews }).items)
    lines.push(...itemLines(item));
  return `${lines.join('\n')}\n`;
}

function itemLines(item: TranscriptItem): string[] {
  switch (item.kind) {
    case 'turn-start':
      return ['', `── turn ${item.turn} ──`];
    case 'turn-end':
      return [`── turn ${item.turn}: ${describeTurnEnd(item.reason)} ──`];
    case 'user':
      return userLines(item);
    case 'assistant':
      return assistantLines(item);
    case 'tool':
      return toolLines(item);
    case 'request-failed':
      return [`  ${requestFailedLine(item)}`];
    case 'retry':
      return [`  ${retryLine(item)}`];
    case 'cancelled':
      return [`  ■ ${item.text}`];
    case 'compaction':
      return compactionLines(item).map((line) => `  ${line}`);
    case 'record':
      return [`  ${recordLine(item)}`];
    case 'event':
      return [`  ${otherEventLine(item.type, item.data, 160)}`];
  }
}

function userLines(item: UserItem): string[] {
  const images = item.images.map(imageLine);
  if (item.source === 'user' || item.source === 'steer') {
    const prefix = item.source === 'user' ? '> ' : '> (steer) ';
    const text = item.text === '' && images.length > 0 ? [] : item.text.split('\n');
    return ['', ...[...text, ...images].map((line) => `${prefix}${line}`), ''];
  }
  return [`  [${item.source}] ${shorten([item.text, ...images].filter(Boolean).join(' '), 200)}`];
}

function assistantLines(item: AssistantItem): string[] {
  const lines: string[] = [];
  for (const block of item.blocks) {
    if (block.type === 'text' && block.text.trim() !== '') lines.push(block.text.trimEnd());
    else if (block.type === 'reasoning' && block.text.trim() !== '')
      lines.push(`  (thinking) ${shorten(block.text, 200)}`);
  }
  if (item.interrupted) lines.push('  (the answer was interrupted)');
  else if (item.failed && lines.length > 0) lines.push('  (this attempt failed)');
  return lines;
}

function toolLines(card: ToolCard): string[] {
  const lines = [toolCallLine(card, 160)];
  if (card.approval !== undefined) {
    const { reason, decision, decisionReason } = card.approval;
    lines.push(`  ? ${card.name} asked for approval${reason !== undefined ? `: ${reason}` : ''}`);
    if (decision !== undefined)
      lines.push(
        `  ${decision === 'deny' ? '✗' : '·'} approval: ${decision}${decisionReason !== undefined ? ` (${decisionReason})` : ''}`,
      );
  }
  if (card.result !== undefined || card.state === 'failed')
    lines.push(toolResultLine(card, { countLines: true, max: 200 }));
  if (card.childSessionId !== undefined)
    lines.push(`    ↳ subagent session ${card.childSessionId} (rein show ${card.childSessionId})`);
  return lines;
}
