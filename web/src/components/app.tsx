import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { SessionConnection } from '../session-connection.ts';
import { EarlierHistory, foldHistoryPage } from '../session-history.ts';
import { Transcript, budgetRecordView, defaultRecordViews, goalRecordView } from '../sdk.ts';
import type { TranscriptItem } from '../sdk.ts';
import type { LiveState, ModelRow, SessionRow } from '../types.ts';
import type { Attachment } from '../attachments.ts';
import { textWithFiles } from '../attachments.ts';
import { ApprovalDialog } from './approval-dialog.tsx';
import { Composer } from './composer.tsx';
import { raiseFor } from '../budget-raise.ts';
import { GoalBudgetBar } from './goal-budget-bar.tsx';
import { QueuePanel } from './queue-panel.tsx';
import { McpPanel } from './mcp-panel.tsx';
import { SettingsPanel } from './settings-panel.tsx';
import { Sidebar } from './sidebar.tsx';
import { StatusBar, TodoList } from './status-bar.tsx';
import { TranscriptScroller } from './transcript-scroller.tsx';

interface Banner {
  id: number;
  code: string;
  message: string;
}

interface Info {
  defaultModel: { provider: string; model: string } | null;
  features: { compaction: boolean; settings: boolean; keys: boolean };
}

function sessionFromHash(): string | undefined {
  const match = /^#\/s\/(.+)$/.exec(window.location.hash);
  return match !== null ? decodeURIComponent(match[1]!) : undefined;
}

let bannerIds = 0;

/** The Web UI: sessions on the left; transcript, queue, composer and the approval dialog on the right. */
export function App() {
  const [sessions, setSessions] = useState<SessionRow[]>([]);
  const [models, setModels] = useState<ModelRow[]>([]);
  const [info, setInfo] = useState<Info | undefined>(undefined);
  const [currentId, setCurrentId] = useState<string | undefined>(sessionFromHash());
  const [live, setLive] = useState<LiveState | undefined>(undefined);
  const [connection, setConnection] = useState<'connecting' | 'open' | 'reconnecting'>('connecting');
  const [, setVersion] = useState(0);
  const [banners, setBanners] = useState<Banner[]>([]);
  const [showSettings, setShowSettings] = useState(false);
  const [dismissedBudget, setDismissedBudget] = useState<number | undefined>(undefined);
  const [pickedModel, setPickedModel] = useState<
    { provider: string; model: string; reasoningEffort?: string } | undefined
  >(undefined);
  // Set when the server refuses this page's token: one banner, not one per failed call.
  const [authFailed, setAuthFailed] = useState(false);
  const [missingSession, setMissingSession] = useState<string | undefined>(undefined);
  const [compactFeedback, setCompactFeedback] = useState<string | undefined>(undefined);
  const [compacting, setCompacting] = useState(false);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [followRequest, setFollowRequest] = useState(0);
  const transcript = useRef(new Transcript({ views: defaultRecordViews }));
  // How often the fold changed each item: rows re-render only when theirs changes.
  const revisions = useRef(new WeakMap<TranscriptItem, number>());
  const revisionOf = useCallback((item: TranscriptItem) => revisions.current.get(item) ?? 0, []);
  const earlier = useRef<EarlierHistory | undefined>(undefined);

  const report = useCallback((error: unknown) => {
    if (error instanceof ApiError && error.code === 'UNAUTHORIZED') {
      setAuthFailed(true);
      return;
    }
    const banner =
      error instanceof ApiError
        ? { id: ++bannerIds, code: error.code, message: error.message }
        : { id: ++bannerIds, code: 'UI_ERROR', message: String(error) };
    // The same failure reported again (another call, a retry) stays one banner.
    setBanners((current) =>
      current.some((entry) => entry.code === banner.code && entry.message === banner.message)
        ? current
        : [...current.slice(-3), banner],
    );
  }, []);

  const refreshSessions = useCallback(() => {
    api<{ sessions: SessionRow[] }>('GET', '/api/sessions').then(
      (answer) => setSessions(answer.sessions),
      report,
    );
  }, [report]);

  const refreshModels = useCallback(() => {
    api<{ models: ModelRow[] }>('GET', '/api/models').then((answer) => setModels(answer.models), report);
  }, [report]);

  useEffect(() => {
    api<Info>('GET', '/api/info').then(setInfo, report);
    refreshModels();
    api<{ sessions: SessionRow[] }>('GET', '/api/sessions').then((answer) => {
      setSessions(answer.sessions);
      if (sessionFromHash() === undefined && answer.sessions[0] !== undefined) open(answer.sessions[0].id);
    }, report);
    const onHash = (): void => setCurrentId(sessionFromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // One event stream per open session; the transcript is rebuilt from seq 0 when the session changes.
  useEffect(() => {
    transcript.current = new Transcript({ views: defaultRecordViews });
    revisions.current = new WeakMap();
    setLive(undefined);
    setMissingSession(undefined);
    setCompactFeedback(undefined);
    setVersion((value) => value + 1);
    earlier.current = undefined;
    if (currentId === undefined) return;
    const sessionId = currentId;
    earlier.current = new EarlierHistory(sessionId, () => transcript.current);
    const connectionHandle = new SessionConnection(sessionId, {
      nextSeq: () => transcript.current.nextSeq,
      onHistory: (page) => {
        // The session opens from its last turns; earlier ones come when the person scrolls up.
        transcript.current = foldHistoryPage(page);
        revisions.current = new WeakMap();
        setVersion((value) => value + 1);
      },
      onLog: (events) => {
        let changed = false;
        let turnEnded = false;
        const counts = revisions.current;
        for (const event of events) {
          const touched = transcript.current.apply(event);
          if (touched === undefined) continue;
          changed = true;
          if (event.type === 'turn/end') turnEnded = true;
          for (const item of touched) counts.set(item, (counts.get(item) ?? 0) + 1);
        }
        if (changed) setVersion((value) => value + 1);
        if (turnEnded) refreshSessions();
      },
      onState: (state) => setLive(state),
      onStatus: (status) => {
        setLive((current) => (current !== undefined ? { ...current, status } : current));
        refreshSessions();
      },
      onInbox: (inbox) => setLive((current) => (current !== undefined ? { ...current, inbox } : current)),
      onApprovals: (approvals) =>
        setLive((current) => (current !== undefined ? { ...current, approvals } : current)),
      onConnection: setConnection,
      onClosed: () => {
        window.location.hash = '';
        refreshSessions();
      },
      onRefused: (code) => {
        if (code === 'UNAUTHORIZED') setAuthFailed(true);
        else setMissingSession(sessionId);
      },
    });
    connectionHandle.start();
    return () => connectionHandle.stop();
  }, [currentId]);

  const jumpToLatest = (): void => setFollowRequest((value) => value + 1);

  const open = (id: string): void => {
    window.location.hash = `#/s/${encodeURIComponent(id)}`;
    setCurrentId(id);
    setSidebarOpen(false);
  };

  const backToSessions = (): void => {
    const other = sessions.find((row) => row.id !== missingSession);
    setMissingSession(undefined);
    if (other !== undefined) open(other.id);
    else {
      window.location.hash = '';
      setCurrentId(undefined);
    }
  };

  const compact = async (): Promise<void> => {
    if (currentId === undefined) return;
    setCompacting(true);
    setCompactFeedback(undefined);
    try {
      const answer = await api<{ result: CompactAnswer | null }>(
        'POST',
        `/api/sessions/${encodeURIComponent(currentId)}/compact`,
        {},
      );
      setCompactFeedback(describeCompaction(answer.result));
    } catch (error) {
      report(error);
    } finally {
      setCompacting(false);
    }
  };

  const createSession = async (): Promise<string | undefined> => {
    const route = pickedModel ?? live?.model ?? info?.defaultModel ?? undefined;
    try {
      const created = await api<{ id: string }>(
        'POST',
        '/api/sessions',
        route !== undefined && route !== null ? route : {},
      );
      refreshSessions();
      open(created.id);
      return created.id;
    } catch (error) {
      report(error);
      return undefined;
    }
  };

  const send = async (
    text: string,
    mode: 'followup' | 'steer',
    attachments: readonly Attachment[] = [],
  ): Promise<boolean> => {
    const goal = /^\/goal(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (goal !== null && (goal[1] ?? '').trim() === '') {
      report(
        new ApiError(400, 'INVALID_GOAL', 'type the objective after /goal, e.g. /goal make the tests pass'),
      );
      return false;
    }
    const sessionId = currentId ?? (await createSession());
    if (sessionId === undefined) return false;
    // Sending means wanting to see the answer: follow the bottom again.
    jumpToLatest();
    try {
      if (goal !== null) {
        // The server records the goal and queues its objective as a followup.
        await api('POST', `/api/sessions/${encodeURIComponent(sessionId)}/goal`, {
          objective: goal[1]!.trim(),
        });
        return true;
      }
      // The stream reports what the message did (queued, claimed, running): no state from this answer.
      const images = attachments.flatMap((attachment) =>
        attachment.kind === 'image' ? [{ mediaType: attachment.mediaType, data: attachment.data }] : [],
      );
      await api('POST', `/api/sessions/${encodeURIComponent(sessionId)}/messages`, {
        text: textWithFiles(text, attachments),
        mode,
        ...(images.length > 0 ? { images } : {}),
      });
      return true;
    } catch (error) {
      report(error);
      return false;
    }
  };

  const call = (method: string, path: string, body?: unknown): void => {
    if (currentId === undefined) return;
    api(method, `/api/sessions/${encodeURIComponent(currentId)}${path}`, body).catch(report);
  };

  const state = transcript.current;
  const pricing = (provider: string, model: string) =>
    models.find((row) => row.provider === provider && row.model === model)?.pricing;
  // A cost is shown only when every response of the span has a known price.
  const costOf = (cost: { usd: number; unpricedResponses: number }): number | undefined =>
    cost.unpricedResponses === 0 ? cost.usd : undefined;
  const lastTurn = state.turns[state.turns.length - 1];
  const pausedBudget = state.stateOf(budgetRecordView).paused;
  const status = live?.status ?? 'idle';
  const approval = live?.approvals[0];
  const paused =
    pausedBudget !== undefined && pausedBudget.seq !== dismissedBudget && status === 'idle'
      ? pausedBudget
      : undefined;
  const currentModel = live?.model ?? pickedModel ?? info?.defaultModel ?? undefined;

  return (
    <div class={`app ${sidebarOpen ? 'sidebar-open' : ''}`}>
      {sidebarOpen && (
        <div class="sidebar-backdrop" aria-hidden="true" onClick={() => setSidebarOpen(false)} />
      )}
      <Sidebar
        sessions={sessions}
        currentId={currentId}
        onOpen={open}
        onNew={() => void createSession()}
        onFork={(id) => {
          api<{ id: string }>('POST', `/api/sessions/${encodeURIComponent(id)}/fork`, {}).then((forked) => {
            refreshSessions();
            open(forked.id);
          }, report);
        }}
        onDelete={(id) => {
          api('DELETE', `/api/sessions/${encodeURIComponent(id)}`).then(() => {
            if (id === currentId) window.location.hash = '';
            refreshSessions();
          }, report);
        }}
        onSettings={() => setShowSettings(true)}
      />
      <main class="main">
        <StatusBar
          status={status}
          connection={
            currentId === undefined || missingSession !== undefined || authFailed ? 'open' : connection
          }
          onToggleSidebar={() => setSidebarOpen((value) => !value)}
          models={models}
          model={currentModel ?? undefined}
          onModel={(provider, model, reasoningEffort) => {
            const choice =
              reasoningEffort !== undefined ? { provider, model, reasoningEffort } : { provider, model };
            setPickedModel(choice);
            if (currentId !== undefined) call('PUT', '/model', choice);
          }}
          turnUsage={lastTurn?.usage}
          turnCost={lastTurn !== undefined ? costOf(state.cost(pricing, lastTurn.turn)) : undefined}
          sessionUsage={state.usage()}
          sessionCost={costOf(state.cost(pricing))}
          onStop={() => call('POST', '/cancel', {})}
          canCompact={
            info?.features.compaction === true && currentId !== undefined && missingSession === undefined
          }
          compacting={compacting}
          onCompact={() => void compact()}
        />
        <McpPanel />
        <GoalBudgetBar
          goal={state.stateOf(goalRecordView).active}
          paused={paused}
          onClearGoal={() => call('DELETE', '/goal')}
          onRaiseAndContinue={(reached) => {
            setDismissedBudget(reached.seq);
            call('POST', '/budget/continue', { raise: raiseFor(reached) });
          }}
          onStop={(reached) => {
            // Recorded as budget/stopped (so a reload does not offer it again); the queued input is dropped.
            setDismissedBudget(reached.seq);
            call('POST', '/budget/stop', {});
          }}
        />
        <div class="banners">
          {authFailed && (
            <div class="banner banner-error" role="alert" data-testid="auth-banner">
              <span class="chip chip-code">UNAUTHORIZED</span> This page’s access token is not accepted (Rein
              was restarted, or the link is old). Open the URL that <code>rein web</code> printed in its
              terminal: it carries the current token.
            </div>
          )}
          {compactFeedback !== undefined && (
            <div class="banner banner-info" role="status" data-testid="compact-feedback">
              {compactFeedback}
              <button type="button" class="link" onClick={() => setCompactFeedback(undefined)}>
                Dismiss
              </button>
            </div>
          )}
          {banners.map((banner) => (
            <div key={banner.id} class="banner banner-error" role="alert" data-testid="api-error">
              <span class="chip chip-code">{banner.code}</span> {banner.message}
              <button
                type="button"
                class="link"
                onClick={() => setBanners((current) => current.filter((entry) => entry.id !== banner.id))}
              >
                Dismiss
              </button>
            </div>
          ))}
        </div>
        <TranscriptScroller
          items={state.items}
          revisionOf={revisionOf}
          sessionKey={currentId}
          followRequest={followRequest}
          hasEarlier={state.startSeq > 0}
          onLoadEarlier={(beforePrepend) => {
            earlier.current?.load(beforePrepend).then((added) => {
              if (added > 0) setVersion((value) => value + 1);
            }, report);
          }}
          onOpenSession={open}
          onRetry={status === 'idle' ? (text) => void send(text, 'followup') : undefined}
        >
          {missingSession !== undefined ? (
            <div class="empty" data-testid="session-not-found">
              <h2>Session not found</h2>
              <p>
                There is no session <code>{missingSession}</code> here: it may have been deleted, or the link
                is from another Rein home.
              </p>
              <button type="button" class="primary" data-testid="back-to-sessions" onClick={backToSessions}>
                Back to your sessions
              </button>
            </div>
          ) : currentId === undefined ? (
            <div class="empty">
              <h1>Rein</h1>
              <p>
                Type a message below to start a session
                {models.some((row) => row.demo === true)
                  ? ' — the offline demo model works without any key'
                  : ''}
                .
              </p>
            </div>
          ) : undefined}
        </TranscriptScroller>
        <TodoList todos={state.todos} />
        <QueuePanel
          nextStep={live?.inbox.nextStep ?? []}
          nextTurn={live?.inbox.nextTurn ?? []}
          onRemove={(id) => call('DELETE', `/inbox/${encodeURIComponent(id)}`)}
          onSendNow={(id) => call('POST', `/inbox/${encodeURIComponent(id)}/send-now`, {})}
        />
        <Composer
          running={status === 'running'}
          disabled={false}
          acceptsImages={
            models.find((row) => row.provider === currentModel?.provider && row.model === currentModel.model)
              ?.images === true
          }
          onSend={send}
        />
      </main>
      {approval !== undefined && (
        <ApprovalDialog
          request={approval}
          count={live?.approvals.length ?? 1}
          onAnswer={async (decision, reason) => {
            try {
              await api(
                'POST',
                `/api/sessions/${encodeURIComponent(approval.sessionId)}/approvals/${encodeURIComponent(approval.requestId)}`,
                {
                  decision,
                  ...(reason !== undefined ? { reason } : {}),
                },
              );
            } catch (error) {
              report(error);
            }
          }}
          onStop={() => call('POST', '/cancel', {})}
        />
      )}
      {showSettings && (
        <SettingsPanel onClose={() => setShowSettings(false)} onError={report} onKeySaved={refreshModels} />
      )}
    </div>
  );
}

/** What `POST /compact` answers (the compaction plugin's result). */
type CompactAnswer =
  | { compacted: true; shadowedTokenCount: number; summaryTokenCount: number }
  | { compacted: false; reason: string };

function describeCompaction(result: CompactAnswer | null): string {
  if (result === null) return 'Compaction did nothing: this server has no compaction for the session.';
  if (result.compacted)
    return `Compacted: ${result.shadowedTokenCount} tokens of older history became a ${result.summaryTokenCount}-token summary.`;
  return result.reason === 'nothing-to-compact'
    ? 'Nothing to compact: the history already fits what is kept verbatim.'
    : `Nothing was compacted (${result.reason}).`;
}
