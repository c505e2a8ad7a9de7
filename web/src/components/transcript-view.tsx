import { useEffect, useState } from 'preact/hooks';
import type { AssistantItem, TranscriptItem } from '../transcript.ts';
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
      return <TurnEndView turn={item.turn} reason={item.reason} error={item.error} />;
    case 'request-failed':
      return (
        <div class="banner banner-error" role="alert" data-testid="error-banner">
          <span class="chip chip-code">{item.failure.code}</span> The model request failed:{' '}
          {item.failure.message}
        </div>
      );
    case 'retry':
      return (
        <div class="notice" data-testid="retry-notice">
          Retrying (attempt {item.attempt}) in {Math.round(item.delayMs / 100) / 10}s after{' '}
          {item.failure.code}
          <RetryCountdown endsAt={item.endsAt} />
        </div>
      );
    case 'cancelled':
      return <div class="notice">{item.cause}</div>;
    case 'notice':
      return item.tag !== undefined ? (
        <div class="notice notice-plugin" data-testid="plugin-notice" data-notice={item.tag}>
          {item.text}
        </div>
      ) : (
        <div class="notice">{item.text}</div>
      );
  }
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

function TurnEndView({
  turn,
  reason,
  error,
}: {
  turn: number;
  reason: string;
  error?: { code: string; message: string } | undefined;
}) {
  if (reason === 'error' && error !== undefined) {
    return (
      <div class="banner banner-error" role="alert" data-testid="error-banner" data-turn-end={reason}>
        <span class="chip chip-code">{error.code}</span> Turn {turn} failed: {error.message}
      </div>
    );
  }
  const text: Record<string, string> = {
    completed: `Turn ${turn} completed`,
    aborted: `Turn ${turn} aborted — stopped before it finished`,
    interrupted: `Turn ${turn} interrupted — Rein exited while it ran; unfinished tool calls were closed`,
    'max-tokens': `Turn ${turn} hit the output-token limit — the answer is cut short`,
    blocked: `Turn ${turn} was blocked by a plugin before the model saw it`,
  };
  return (
    <div class={`turn-end reason-${reason}`} data-testid="turn-end" data-turn-end={reason}>
      {text[reason] ?? `Turn ${turn} ended: ${reason}`}
    </div>
  );
}

/** The seconds left until a retry starts, ticking while any remain (nothing once the wait is over). */
function RetryCountdown({ endsAt }: { endsAt: number }) {
  const [now, setNow] = useState(() => Date.now());
  const left = Math.ceil((endsAt - now) / 1000);
  useEffect(() => {
    if (left <= 0) return undefined;
    const timer = setTimeout(() => setNow(Date.now()), 250);
    return () => clearTimeout(timer);
  }, [now, left]);
  if (left <= 0) return null;
  return (
    <span class="retry-countdown" data-testid="retry-countdown">
      {' '}
      — {left}s left
    </span>
  );
}
