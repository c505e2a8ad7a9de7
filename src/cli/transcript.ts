import type {
  AnySessionEvent,
  AssistantMessage,
  ContentBlock,
  SessionHeader,
  ToolResultMessage,
  TurnEndReason,
  UserMessage,
} from '../index.ts';
import { describePluginRecord } from './plugin-records.ts';
import { describeTurnEnd } from './run-output.ts';

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
  const calls = new Map<string, string>();
  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        lines.push('', `── turn ${(event.data as { turn: number }).turn} ──`);
        break;
      case 'turn/end': {
        const data = event.data as { turn: number; reason: TurnEndReason };
        lines.push(`── turn ${data.turn}: ${describeTurnEnd(data.reason)} ──`);
        break;
      }
      case 'user/message':
        lines.push(...userLines(event.data as UserMessage));
        break;
      case 'assistant/message': {
        const data = event.data as { message: AssistantMessage; interrupted?: true };
        for (const block of data.message.content) {
          if (block.type === 'tool-call') calls.set(block.id, block.name);
        }
        lines.push(...assistantLines(data.message.content, data.interrupted === true));
        break;
      }
      case 'tool/result':
        lines.push(
          ...toolResultLines(
            event.data as { message: ToolResultMessage; error?: { code: string }; meta?: unknown },
            calls,
          ),
        );
        break;
      case 'tool/approval-requested': {
        const data = event.data as { name: string; reason?: string };
        lines.push(
          `  ? ${data.name} asked for approval${data.reason !== undefined ? `: ${data.reason}` : ''}`,
        );
        break;
      }
      case 'tool/approval-decided': {
        const data = event.data as { decision: string; reason?: string };
        lines.push(
          `  ${data.decision === 'deny' ? '✗' : '·'} approval: ${data.decision}${data.reason !== undefined ? ` (${data.reason})` : ''}`,
        );
        break;
      }
      case 'request/failed': {
        const failure = (event.data as { failure: { code: string; message: string } }).failure;
        lines.push(`  ! request failed — ${failure.code}: ${oneLine(failure.message)}`);
        break;
      }
      case 'agent/cancelled': {
        const cause = (event.data as { cause: { kind: string; reason?: string } }).cause;
        lines.push(`  ■ cancelled (${cause.kind}${cause.reason !== undefined ? `: ${cause.reason}` : ''})`);
        break;
      }
      case 'compaction/summary':
        lines.push('  ⋯ older history was summarized');
        break;
      case 'compaction/prune':
        lines.push('  ⋯ oversized tool results were shortened');
        break;
      case 'assistant/chunk':
      case 'step/start':
      case 'step/end':
      case 'tool/call':
      case 'request/header':
      case 'request/context':
      case 'agent/inbox/spliced':
      case 'session/end-seed':
      case 'compaction/start':
      case 'compaction/end':
      case 'llm/retry-started':
        break;
      default:
        lines.push(
          `  ${describePluginRecord(event) ?? `· ${event.type} ${shorten(JSON.stringify(event.data), 160)}`}`,
        );
    }
  }
  return `${lines.join('\n')}\n`;
}

function userLines(message: UserMessage): string[] {
  const text = blocksText(message.content);
  const kind = message.source.kind;
  if (kind === 'user') return ['', ...text.split('\n').map((line) => `> ${line}`), ''];
  if (kind === 'steer') return ['', ...text.split('\n').map((line) => `> (steer) ${line}`), ''];
  return [`  [${kind}] ${shorten(text, 200)}`];
}

function assistantLines(content: readonly ContentBlock[], interrupted: boolean): string[] {
  const lines: string[] = [];
  for (const block of content) {
    if (block.type === 'text' && block.text.trim() !== '') lines.push(block.text.trimEnd());
    else if (block.type === 'reasoning' && block.text.trim() !== '')
      lines.push(`  (thinking) ${shorten(block.text, 200)}`);
    else if (block.type === 'tool-call') lines.push(`⏺ ${block.name} ${shorten(block.arguments, 160)}`);
  }
  if (interrupted) lines.push('  (the answer was interrupted)');
  return lines;
}

function toolResultLines(
  data: { message: ToolResultMessage; error?: { code: string }; meta?: unknown },
  calls: ReadonlyMap<string, string>,
): string[] {
  const block = data.message.content[0];
  const name = calls.get(data.message.source.callId) ?? 'tool';
  const text = block?.type === 'tool-result' ? blocksText(block.content) : '';
  const lines: string[] = [];
  if (block?.type === 'tool-result' && block.isError === true) {
    lines.push(
      `  ✗ ${name}${data.error !== undefined ? ` ${data.error.code}` : ''}: ${shorten(text.replace(/^Error:\s*/, ''), 200)}`,
    );
  } else {
    const count = text === '' ? 0 : text.split('\n').length;
    lines.push(`  ✓ ${name} (${count} ${count === 1 ? 'line' : 'lines'})`);
  }
  for (const child of childSessions(data.meta))
    lines.push(`    ↳ subagent session ${child} (rein show ${child})`);
  return lines;
}

/** Session ids a tool result's meta names (e.g. a subagent's), found by key name. */
function childSessions(meta: unknown): string[] {
  if (typeof meta !== 'object' || meta === null) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(meta)) {
    if (/session(id)?$/i.test(key) && typeof value === 'string') found.push(value);
  }
  return found;
}

function blocksText(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

function shorten(text: string, max: number): string {
  const flat = oneLine(text);
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
