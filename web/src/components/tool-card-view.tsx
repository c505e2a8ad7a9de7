import { useState } from 'preact/hooks';
import type { ToolCard } from '../sdk.ts';

const previewLines = 24;
const previewChars = 3000;

const stateLabels: Record<ToolCard['state'], string> = {
  requested: 'requested',
  running: 'running',
  'awaiting-approval': 'awaiting approval',
  done: 'done',
  failed: 'failed',
};

/** A tool call: name, arguments, approval, status, and its (bounded) result or diff. */
export function ToolCardView({
  card,
  onOpenSession,
}: {
  card: ToolCard;
  onOpenSession?: ((sessionId: string) => void) | undefined;
}) {
  const [expanded, setExpanded] = useState(false);
  const args = prettyArguments(card.arguments);
  const summary = argumentSummary(card.arguments);
  const diff = diffOf(card.result?.meta);
  const childSessionId = card.childSessionId;
  const mcpServer = mcpServerOf(card.result?.meta) ?? serverOfTool(card.name);
  const text = card.result?.text ?? '';
  const lines = text.split('\n');
  const long = lines.length > previewLines || text.length > previewChars;
  const shown = expanded || !long ? text : lines.slice(0, previewLines).join('\n').slice(0, previewChars);
  return (
    <div class={`tool-card state-${card.state}`} data-testid="tool-card" data-call-id={card.callId}>
      <div class="tool-head">
        <span class="tool-name">{card.name}</span>
        {summary !== '' && <span class="tool-summary">{summary}</span>}
        <span class={`chip chip-${card.state}`} data-testid="tool-state">
          {stateLabels[card.state]}
        </span>
        {mcpServer !== undefined && (
          <span class="chip chip-mcp" data-testid="tool-server" title="MCP server">
            MCP · {mcpServer}
          </span>
        )}
        {card.result?.code !== undefined && <span class="chip chip-code">{card.result.code}</span>}
        {card.progress !== undefined && card.result === undefined && (
          <span class="chip chip-running" data-testid="tool-progress">
            {card.progress.total !== undefined
              ? `${card.progress.progress}/${card.progress.total}`
              : String(card.progress.progress)}
            {card.progress.message !== undefined ? ` ${card.progress.message}` : ''}
          </span>
        )}
      </div>
      <details class="tool-args">
        <summary>Arguments</summary>
        <pre>{args}</pre>
      </details>
      {card.approval !== undefined && (
        <div class="tool-approval">
          {card.approval.decision === undefined
            ? `Waiting for your approval${card.approval.reason !== undefined ? `: ${card.approval.reason}` : ''}`
            : `Approval: ${decisionLabel(card.approval.decision)}${card.approval.decisionReason !== undefined ? ` (${card.approval.decisionReason})` : ''}`}
        </div>
      )}
      {childSessionId !== undefined && onOpenSession !== undefined && (
        <div class="tool-child">
          <button
            type="button"
            class="link"
            data-testid="open-child-session"
            onClick={() => onOpenSession(childSessionId)}
          >
            Open the subagent’s session
          </button>
        </div>
      )}
      {diff !== undefined && <DiffView diff={diff} />}
      {card.result !== undefined && (
        <div class={`tool-result ${card.result.isError ? 'is-error' : ''}`}>
          <pre data-testid="tool-output">{shown}</pre>
          {long && (
            <button type="button" class="link" onClick={() => setExpanded(!expanded)}>
              {expanded ? 'Show less' : `Show all (${lines.length} lines)`}
            </button>
          )}
        </div>
      )}
    </div>
  );
}

/** A unified diff, line by line, as text (never HTML). */
export function DiffView({ diff }: { diff: string }) {
  // The patch's `Index:` banner and its rule of `=` say nothing the file lines do not.
  const lines = diff.split('\n').filter((line) => !line.startsWith('Index: ') && !/^={10,}$/.test(line));
  return (
    <pre class="diff">
      {lines.map((line, index) => (
        <span
          key={index}
          class={
            line.startsWith('+++') || line.startsWith('---')
              ? 'diff-file'
              : line.startsWith('+')
                ? 'diff-add'
                : line.startsWith('-')
                  ? 'diff-del'
                  : line.startsWith('@@')
                    ? 'diff-hunk'
                    : ''
          }
        >
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function decisionLabel(decision: string): string {
  switch (decision) {
    case 'allow-once':
      return 'allowed once';
    case 'allow-session':
      return 'allowed for this session';
    case 'deny':
      return 'denied';
    case 'deny-session':
      return 'denied for this session';
    case 'aborted':
      return 'cancelled (the turn was stopped)';
    default:
      return decision;
  }
}

function diffOf(meta: unknown): string | undefined {
  const diff = (meta as { diff?: unknown } | undefined)?.diff;
  return typeof diff === 'string' && diff !== '' ? diff : undefined;
}

/** Pretty JSON when the arguments parse, the raw string otherwise. */
export function prettyArguments(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    // The model's raw string is shown as is.
    return raw;
  }
}

function argumentSummary(raw: string): string {
  try {
    const parsed = JSON.parse(raw) as Record<string, unknown>;
    for (const key of ['path', 'file', 'command', 'pattern', 'query', 'url']) {
      const value = parsed[key];
      if (typeof value === 'string') return value.length > 120 ? `${value.slice(0, 117)}…` : value;
    }
  } catch {
    // No summary for arguments that do not parse.
  }
  return '';
}

function mcpServerOf(meta: unknown): string | undefined {
  const mcp = (meta as { mcp?: { server?: unknown } } | undefined)?.mcp;
  return typeof mcp?.server === 'string' ? mcp.server : undefined;
}

const mcpToolServers = new Map<string, string>();

/** Remembers which MCP server serves each tool (from `/api/mcp`), so a running card names it too. */
export function rememberMcpTools(
  servers: readonly { name: string; tools: readonly { name: string }[] }[],
): void {
  for (const server of servers) for (const tool of server.tools) mcpToolServers.set(tool.name, server.name);
}

function serverOfTool(name: string): string | undefined {
  return mcpToolServers.get(name);
}
