import type { ModelRow, Usage } from '../types.ts';
import type { Transcript } from '../sdk.ts';

/** Status, connection, model picker, the token and cost meter, and Stop. */
export function StatusBar(props: {
  status: 'idle' | 'running';
  connection: 'connecting' | 'open' | 'reconnecting';
  models: readonly ModelRow[];
  model: { provider: string; model: string } | undefined;
  onModel: (provider: string, model: string) => void;
  turnUsage: Usage | undefined;
  turnCost: number | undefined;
  sessionUsage: Usage;
  sessionCost: number | undefined;
  onStop: () => void;
  canCompact: boolean;
  compacting: boolean;
  onCompact: () => void;
  onToggleSidebar: () => void;
}) {
  const value = props.model !== undefined ? `${props.model.provider}/${props.model.model}` : '';
  return (
    <header class="status-bar">
      <button
        type="button"
        class="menu-toggle"
        data-testid="toggle-sidebar"
        aria-label="Sessions"
        title="Sessions"
        onClick={props.onToggleSidebar}
      >
        ☰
      </button>
      <span class={`status status-${props.status}`} data-testid="agent-status" data-status={props.status}>
        {props.status}
      </span>
      {props.connection !== 'open' && (
        <span class="chip chip-warn" data-testid="connection">
          {props.connection === 'connecting' ? 'connecting…' : 'reconnecting…'}
        </span>
      )}
      <label class="model-picker">
        <span class="sr-only">Model</span>
        <select
          data-testid="model-picker"
          value={value}
          onChange={(event) => {
            const [provider, ...rest] = (event.target as HTMLSelectElement).value.split('/');
            if (provider !== undefined) props.onModel(provider, rest.join('/'));
          }}
        >
          {value !== '' && !props.models.some((row) => `${row.provider}/${row.model}` === value) && (
            <option value={value}>{value}</option>
          )}
          {props.models.map((row) => (
            <option key={`${row.provider}/${row.model}`} value={`${row.provider}/${row.model}`}>
              {row.label ?? `${row.provider} · ${row.model}`}
            </option>
          ))}
        </select>
      </label>
      <span class="meter" data-testid="meter" title="input / output tokens (cost)">
        {props.turnUsage !== undefined && <>turn {formatUsage(props.turnUsage, props.turnCost)} · </>}
        session {formatUsage(props.sessionUsage, props.sessionCost)}
      </span>
      <span class="spacer" />
      {props.canCompact && (
        <button
          type="button"
          data-testid="compact"
          onClick={props.onCompact}
          disabled={props.status === 'running' || props.compacting}
          title="Summarize older history to free context"
        >
          {props.compacting ? 'Compacting…' : 'Compact'}
        </button>
      )}
      <button
        type="button"
        class="stop"
        data-testid="stop"
        disabled={props.status !== 'running'}
        onClick={props.onStop}
      >
        Stop
      </button>
    </header>
  );
}

/** The agent's todo list, when it keeps one. */
export function TodoList({ todos }: { todos: Transcript['todos'] }) {
  if (todos === undefined || todos.length === 0) return null;
  return (
    <aside class="todos" data-testid="todo-list">
      <div class="queue-title">Tasks</div>
      <ul>
        {todos.map((todo, index) => (
          <li key={index} class={`todo todo-${todo.status}`}>
            <span aria-hidden="true">
              {todo.status === 'completed' ? '☑' : todo.status === 'in_progress' ? '▶' : '☐'}
            </span>{' '}
            {todo.content}
          </li>
        ))}
      </ul>
    </aside>
  );
}

function formatUsage(usage: Usage, cost: number | undefined): string {
  const input = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  const text = `${compact(input)} in / ${compact(usage.outputTokens)} out`;
  return cost !== undefined ? `${text} ($${cost.toFixed(cost < 0.01 ? 4 : 2)})` : text;
}

function compact(value: number): string {
  return value >= 10_000 ? `${Math.round(value / 1000)}k` : String(value);
}
