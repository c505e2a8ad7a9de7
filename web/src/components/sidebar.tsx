import type { SessionRow } from '../types.ts';

/** The session list: open, new, fork, delete; and the way to settings. */
export function Sidebar(props: {
  sessions: readonly SessionRow[];
  currentId: string | undefined;
  onOpen: (id: string) => void;
  onNew: () => void;
  onFork: (id: string) => void;
  onDelete: (id: string) => void;
  onSettings: () => void;
}) {
  return (
    <nav class="sidebar" aria-label="Sessions">
      <div class="brand">Rein</div>
      <button type="button" class="primary new-session" data-testid="new-session" onClick={props.onNew}>
        New session
      </button>
      <ul class="session-list" data-testid="session-list">
        {props.sessions.map((session) => (
          <li
            key={session.id}
            class={session.id === props.currentId ? 'current' : ''}
            data-testid="session-row"
          >
            <button
              type="button"
              class="session-open"
              onClick={() => props.onOpen(session.id)}
              title={session.cwd ?? ''}
            >
              <span class="session-title">{session.title ?? 'New session'}</span>
              <span class="session-meta">
                {session.status === 'running' ? '● running · ' : ''}
                {session.turns} turn{session.turns === 1 ? '' : 's'} ·{' '}
                {new Date(session.updatedAt).toLocaleString()}
              </span>
            </button>
            <span class="session-actions">
              <button
                type="button"
                class="link"
                onClick={() => props.onFork(session.id)}
                title="Copy this conversation into a new session"
              >
                Fork
              </button>
              <button
                type="button"
                class="link danger"
                onClick={() => {
                  if (window.confirm('Delete this session and its log?')) props.onDelete(session.id);
                }}
              >
                Delete
              </button>
            </span>
          </li>
        ))}
      </ul>
      <button type="button" class="settings-button" data-testid="open-settings" onClick={props.onSettings}>
        Settings
      </button>
    </nav>
  );
}
