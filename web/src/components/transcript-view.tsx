import type { AssistantItem, CompactionItem, TranscriptItem, TurnEndReason } from '../sdk.ts';
import { MarkdownView } from './markdown-view.tsx';
import { ToolCardView } from './tool-card-view.tsx';

const sourceLabels: Record<string, string> = {
  user: 'You',
  steer: 'You (steering)',
  inject: 'Context',
  goal: 'Goal',
};

/** The transcript: every item folded from the log, in order. */
export function TranscriptView({
  items,
  onOpenSession,
}: {
  items: readonly TranscriptItem[];
  onOpenSession?: (sessionId: string) => void;
}) {
  return (
    <div class="transcript" data-testid="transcript">
      {items.map((item) => (
        <ItemView key={item.key} item={item} onOpenSession={onOpenSession} />
      ))}
    </div>
  );
}

function ItemView({
  item,
  onOpenSession,
}: {
  item: TranscriptItem;
  onOpenSession: ((sessionId: string) => void) | undefined;
}) {
  switch (item.kind) {
    case 'turn-start':
      return <div class="turn-divider">Turn {item.turn}</div>;
    case 'user':
      return (
        <div class={`message user source-${item.source}`} data-testid="user-message">
          <div class="who">{sourceLabels[item.source] ?? item.source}</div>
          <div class="plain">
            {item.message.content.map((block, index) =>
              block.type === 'text' ? (
                <span key={index}>{block.text}</span>
              ) : (
                <span key={index}>[{block.type}]</span>
              ),
            )}
          </div>
        </div>
      );
    case 'assistant':
      return <AssistantView item={item} />;
    case 'tool':
      return <ToolCardView card={item} onOpenSession={onOpenSession} />;
    case 'turn-end':
      return <TurnEndView turn={item.turn} reason={item.reason} />;
    case 'request-failed':
      return (
        <div class="banner banner-error" role="alert" data-testid="error-banner">
          <span class="chip chip-code">{item.failure.code}</span> The model request failed:{' '}
          {item.failure.message}
        </div>
      );
    case 'retry':
      return (
        <div class="notice">
          Retrying (attempt {item.attempt}) in {Math.round(item.delayMs / 100) / 10}s after{' '}
          {item.failure.code}
        </div>
      );
    case 'cancelled':
      return <div class="notice">{item.text}</div>;
    case 'compaction':
      return <CompactionView item={item} />;
    case 'record':
      return (
        <div
          class={`notice notice-plugin tone-${item.tone}`}
          data-testid="plugin-notice"
          data-notice={item.type}
        >
          {item.text}
        </div>
      );
    case 'event':
      return (
        <details class="notice notice-event" data-testid="other-event">
          <summary>
            <code>{item.type}</code>
          </summary>
          <pre>{JSON.stringify(item.data, null, 2)}</pre>
        </details>
      );
  }
}

function CompactionView({ item }: { item: CompactionItem }) {
  const parts: string[] = [];
  if (item.summary !== undefined)
    parts.push(
      `Earlier conversation was summarized: ${item.summary.shadowedTokens} → ${item.summary.summaryTokens} tokens.`,
    );
  if (item.prune !== undefined)
    parts.push(
      `${item.prune.results} oversized tool ${item.prune.results === 1 ? 'result was' : 'results were'} shortened: ` +
        `${item.prune.shadowedTokens} → ${item.prune.prunedTokens} tokens.`,
    );
  if (item.error !== undefined)
    parts.push(
      `Compaction failed (${item.error.code}): ${item.error.message}. The conversation is unchanged.`,
    );
  if (item.state === 'running') parts.push('Compacting…');
  return (
    <div class="notice notice-compaction" data-testid="compaction-notice" data-state={item.state}>
      {parts.join(' ')}
    </div>
  );
}

function AssistantView({ item }: { item: AssistantItem }) {
  const visible = item.blocks.filter((block) => block.type === 'text' || block.type === 'reasoning');
  if (visible.length === 0 && !item.streaming) return null;
  return (
    <div
      class={`message assistant ${item.streaming ? 'streaming' : ''} ${item.failed ? 'failed' : ''}`}
      data-testid="assistant-message"
      data-streaming={item.streaming ? 'true' : 'false'}
    >
      <div class="who">
        Assistant
        {item.interrupted && <span class="chip">interrupted</span>}
        {item.failed && <span class="chip chip-failed">failed attempt</span>}
      </div>
      {item.blocks.map((block, index) => {
        if (block.type === 'reasoning') {
          return (
            <details key={index} class="reasoning" open={item.streaming}>
              <summary>Reasoning</summary>
              <div class="plain">{block.text}</div>
            </details>
          );
        }
        if (block.type === 'text') return <MarkdownView key={index} text={block.text} />;
        return null;
      })}
      {item.streaming && <span class="cursor" aria-hidden="true" />}
    </div>
  );
}

function TurnEndView({ turn, reason }: { turn: number; reason: TurnEndReason }) {
  if (reason.kind === 'error') {
    return (
      <div class="banner banner-error" role="alert" data-testid="error-banner" data-turn-end={reason.kind}>
        <span class="chip chip-code">{reason.error.code}</span> Turn {turn} failed: {reason.error.message}
      </div>
    );
  }
  const text: Record<Exclude<TurnEndReason['kind'], 'error'>, string> = {
    completed: `Turn ${turn} completed`,
    aborted: `Turn ${turn} aborted — stopped before it finished`,
    interrupted: `Turn ${turn} interrupted — Rein exited while it ran; unfinished tool calls were closed`,
    'max-tokens': `Turn ${turn} hit the output-token limit — the answer is cut short`,
    blocked: `Turn ${turn} was blocked by a plugin before the model saw it`,
  };
  return (
    <div class={`turn-end reason-${reason.kind}`} data-testid="turn-end" data-turn-end={reason.kind}>
      {text[reason.kind]}
    </div>
  );
}
