import { memo } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type {
  AssistantItem,
  CompactionItem,
  LlmFailure,
  RetryItem,
  TranscriptItem,
  TurnEndReason,
} from '../sdk.ts';
import { GrowingMarkdownView } from './markdown-view.tsx';
import { GrowingPlainText } from './growing-plain-text.tsx';
import { ToolCardView } from './tool-card-view.tsx';

const sourceLabels: Record<string, string> = {
  user: 'You',
  steer: 'You (steering)',
  inject: 'Context',
  goal: 'Goal',
};

/**
 * The transcript: the items folded from the log from `start` on, in order; one banner per failure. An
 * item re-renders only when its revision changes (the fold changes items in place).
 */
export function TranscriptView({
  items,
  start = 0,
  revisionOf = () => 0,
  onOpenSession,
  onRetry,
  children,
}: {
  items: readonly TranscriptItem[];
  /** The first item shown (earlier ones are loaded on demand). */
  start?: number;
  /** How many times the fold has changed an item. */
  revisionOf?: (item: TranscriptItem) => number;
  onOpenSession?: (sessionId: string) => void;
  /** Sends a failed turn's prompt again; absent while the agent runs. */
  onRetry?: ((text: string) => void) | undefined;
  /** Shown before the items (the "load earlier" control). */
  children?: ComponentChildren;
}) {
  const failures = failurePlan(items);
  return (
    <div class="transcript" data-testid="transcript">
      {children}
      {items.slice(start).map((item) => {
        const plan = failures.get(item);
        if (plan === 'hidden') return null;
        if (typeof plan === 'object' && plan.kind === 'retrying' && item.kind === 'request-failed')
          return <RetryingView key={item.key} failure={item.failure} retry={plan.retry} />;
        if (
          typeof plan === 'object' &&
          plan.kind === 'failed-turn' &&
          item.kind === 'turn-end' &&
          item.reason.kind === 'error'
        )
          return (
            <FailedTurnView
              key={item.key}
              turn={item.turn}
              failure={item.reason.error}
              retries={plan.retries}
              prompt={plan.prompt}
              onRetry={onRetry}
            />
          );
        return (
          <ItemRow key={item.key} item={item} revision={revisionOf(item)} onOpenSession={onOpenSession} />
        );
      })}
    </div>
  );
}

type FailurePlan =
  | 'hidden'
  | 'banner'
  | { kind: 'retrying'; retry: RetryItem }
  | { kind: 'failed-turn'; retries: number; prompt: string | undefined };

/**
 * How failures show: a failed attempt followed by a retry is one "retrying" line (the retry's own item
 * hidden); a failure that ended its turn shows once, as the turn's banner with the retry count.
 */
function failurePlan(items: readonly TranscriptItem[]): Map<TranscriptItem, FailurePlan> {
  const plan = new Map<TranscriptItem, FailurePlan>();
  const failedTurns = new Set<number>();
  for (const item of items)
    if (item.kind === 'turn-end' && item.reason.kind === 'error') failedTurns.add(item.turn);
  let prompt: string | undefined;
  let retries = 0;
  items.forEach((item, index) => {
    if (item.kind === 'turn-start') {
      prompt = undefined;
      retries = 0;
    } else if (item.kind === 'user' && item.source === 'user') prompt = item.text;
    else if (item.kind === 'request-failed') {
      const next = items[index + 1];
      if (next?.kind === 'retry') {
        plan.set(item, { kind: 'retrying', retry: next });
        plan.set(next, 'hidden');
        retries += 1;
      } else plan.set(item, failedTurns.has(item.turn) ? 'hidden' : 'banner');
    } else if (item.kind === 'turn-end' && item.reason.kind === 'error')
      plan.set(item, { kind: 'failed-turn', retries, prompt });
  });
  return plan;
}

function RetryingView({ failure, retry }: { failure: LlmFailure; retry: RetryItem }) {
  return (
    <div class="notice notice-retry" data-testid="retry-notice">
      <span class="chip chip-code">{failure.code}</span> {failure.message} — retrying in{' '}
      {Math.round(retry.delayMs / 100) / 10}s (automatic retry {retry.attempt})
      <RetryCountdown endsAt={retry.endsAt} />
    </div>
  );
}

function FailedTurnView(props: {
  turn: number;
  failure: LlmFailure;
  retries: number;
  prompt: string | undefined;
  onRetry: ((text: string) => void) | undefined;
}) {
  const { prompt, onRetry } = props;
  return (
    <div class="banner banner-error" role="alert" data-testid="error-banner" data-turn-end="error">
      <span class="chip chip-code">{props.failure.code}</span> Turn {props.turn} failed:{' '}
      {props.failure.message}
      <div class="banner-detail" data-testid="retry-state">
        {props.retries === 0
          ? 'Not retried automatically.'
          : `Gave up after ${props.retries} automatic ${props.retries === 1 ? 'retry' : 'retries'}.`}
      </div>
      {prompt !== undefined && onRetry !== undefined && (
        <div class="banner-actions">
          <button type="button" data-testid="retry-turn" onClick={() => onRetry(prompt)}>
            Retry
          </button>
        </div>
      )}
    </div>
  );
}

// The session opener is the same function across renders in meaning; only the item and its revision matter.
const ItemRow = memo(
  ({
    item,
    onOpenSession,
  }: {
    item: TranscriptItem;
    revision: number;
    onOpenSession: ((sessionId: string) => void) | undefined;
  }) => <ItemView item={item} onOpenSession={onOpenSession} />,
  (before, after) => before.item === after.item && before.revision === after.revision,
);

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
              ) : block.type === 'image' && block.data !== undefined ? (
                <img
                  key={index}
                  class="user-image"
                  data-testid="user-image"
                  alt="attached image"
                  src={`data:${block.mediaType};base64,${block.data}`}
                />
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
        <div class="notice" data-testid="retry-notice">
          Retrying (attempt {item.attempt}) in {Math.round(item.delayMs / 100) / 10}s after{' '}
          {item.failure.code}
          <RetryCountdown endsAt={item.endsAt} />
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
              <GrowingPlainText text={block.text} />
            </details>
          );
        }
        if (block.type === 'text')
          return <GrowingMarkdownView key={index} text={block.text} streaming={item.streaming} />;
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
