import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApprovalRequest } from '../types.ts';
import { DiffView, prettyArguments } from './tool-card-view.tsx';

/** What a person can answer: allow or deny, this call only or identical calls for the rest of the session. */
export type ApprovalAnswer = 'allow-once' | 'allow-session' | 'deny' | 'deny-session';

/**
 * The seed's approval dialog: tool, arguments, reason; allow once / for this session; deny once / for
 * this session (with a reason the model reads); Stop in reach.
 */
export function ApprovalDialog(props: {
  request: ApprovalRequest;
  count: number;
  onAnswer: (decision: ApprovalAnswer, reason?: string) => Promise<void>;
  onStop: () => void;
}) {
  const { request } = props;
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const allowButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    setDenying(false);
    setReason('');
    setBusy(false);
    allowButton.current?.focus();
  }, [request.requestId]);
  const answer = (decision: ApprovalAnswer, text?: string): void => {
    setBusy(true);
    void props.onAnswer(decision, text).finally(() => setBusy(false));
  };
  return (
    <div class="overlay">
      <div
        class="dialog approval"
        role="dialog"
        aria-modal="true"
        aria-labelledby="approval-title"
        data-testid="approval-dialog"
      >
        <h2 id="approval-title">
          Allow <code>{request.name}</code>?{props.count > 1 && <span class="chip">1 of {props.count}</span>}
        </h2>
        {request.reason !== undefined && <p class="reason">{request.reason}</p>}
        {request.preview !== undefined ? (
          <div class="approval-preview" data-testid="approval-preview">
            <p class="preview-title">
              {request.preview.created ? 'New file ' : 'Changes to '}
              <code>{request.preview.path}</code>
            </p>
            <DiffView diff={request.preview.diff} />
            <details class="tool-args">
              <summary>Arguments</summary>
              <pre class="approval-args">{prettyArguments(request.arguments)}</pre>
            </details>
          </div>
        ) : (
          <pre class="approval-args">{prettyArguments(request.arguments)}</pre>
        )}
        {denying ? (
          <div class="deny-form">
            <label for="deny-reason">Why not? (the model reads this)</label>
            <textarea
              id="deny-reason"
              value={reason}
              onInput={(event) => setReason((event.target as HTMLTextAreaElement).value)}
              rows={3}
            />
            <div class="actions">
              <button type="button" class="danger" disabled={busy} onClick={() => answer('deny', reason)}>
                Deny
              </button>
              <button
                type="button"
                class="danger"
                disabled={busy}
                title="Also refuse identical calls for the rest of this session"
                onClick={() => answer('deny-session', reason)}
              >
                Deny for this session
              </button>
              <button type="button" disabled={busy} onClick={() => setDenying(false)}>
                Back
              </button>
            </div>
          </div>
        ) : (
          <div class="actions">
            <button
              type="button"
              class="primary"
              ref={allowButton}
              disabled={busy}
              onClick={() => answer('allow-once')}
            >
              Allow once
            </button>
            <button type="button" disabled={busy} onClick={() => answer('allow-session')}>
              Allow for this session
            </button>
            <button type="button" disabled={busy} onClick={() => setDenying(true)}>
              Deny…
            </button>
            <span class="spacer" />
            <button
              type="button"
              class="stop"
              onClick={props.onStop}
              title="Stop the turn (cancels this call)"
            >
              Stop
            </button>
          </div>
        )}
      </div>
    </div>
  );
}
