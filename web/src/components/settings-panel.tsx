import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { SettingsView } from '../types.ts';

/** Keys (write-only: the browser never gets one back) and the approval mode. */
export function SettingsPanel(props: {
  onClose: () => void;
  onError: (error: unknown) => void;
  /** Called after a key was saved: the server serves that provider's models from now on. */
  onKeySaved: () => void;
}) {
  const [view, setView] = useState<SettingsView | undefined>(undefined);
  const [provider, setProvider] = useState('');
  const [key, setKey] = useState('');
  const [saved, setSaved] = useState('');
  useEffect(() => {
    api<SettingsView>('GET', '/api/settings').then(setView, props.onError);
  }, []);
  const saveKey = (): void => {
    const name = provider.trim();
    if (name === '' || key.trim() === '') return;
    api<SettingsView>('PUT', `/api/settings/keys/${encodeURIComponent(name)}`, { key }).then((next) => {
      setView(next);
      setKey('');
      setSaved(`Saved the ${name} key.`);
      props.onKeySaved();
    }, props.onError);
  };
  const setMode = (mode: string): void => {
    api<SettingsView>('PUT', '/api/settings/approval-mode', { mode }).then(setView, props.onError);
  };
  return (
    <div class="overlay">
      <div
        class="dialog settings"
        role="dialog"
        aria-modal="true"
        aria-labelledby="settings-title"
        data-testid="settings-panel"
      >
        <h2 id="settings-title">Settings</h2>
        {view === undefined ? (
          <p>Loading…</p>
        ) : (
          <>
            <h3>Model providers</h3>
            <ul class="providers">
              {view.providers.map((entry) => (
                <li key={entry.provider}>
                  <strong>{entry.provider}</strong>{' '}
                  {entry.configured ? (
                    <span class="chip chip-done">
                      key set{entry.hint !== undefined ? ` (…${entry.hint})` : ''}
                      {entry.source !== undefined ? ` · ${entry.source}` : ''}
                    </span>
                  ) : (
                    <span class="chip">no key</span>
                  )}
                </li>
              ))}
            </ul>
            {view.help !== undefined && <p class="help">{view.help}</p>}
            {view.editable === true && (
              <div class="key-form">
                <label>
                  Provider
                  <select
                    value={provider}
                    onChange={(event) => setProvider((event.target as HTMLSelectElement).value)}
                  >
                    <option value="">Choose…</option>
                    {view.providers.map((entry) => (
                      <option key={entry.provider} value={entry.provider}>
                        {entry.provider}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  API key
                  <input
                    type="password"
                    autocomplete="off"
                    value={key}
                    onInput={(event) => setKey((event.target as HTMLInputElement).value)}
                  />
                </label>
                <button type="button" class="primary" onClick={saveKey}>
                  Save key
                </button>
                {saved !== '' && (
                  <p class="help">
                    {saved} It is stored in Rein’s config (readable only by you), never shown again, and used
                    from the next request on.
                  </p>
                )}
              </div>
            )}
            {view.configPath !== undefined && (
              <p class="help">
                Config: <code>{view.configPath}</code>
              </p>
            )}
            {view.approvalMode !== undefined &&
              (view.approvalModeEditable === true && view.approvalModes !== undefined ? (
                <label class="approval-mode">
                  Approval mode
                  <select
                    value={view.approvalMode}
                    onChange={(event) => setMode((event.target as HTMLSelectElement).value)}
                  >
                    {view.approvalModes.map((mode) => (
                      <option key={mode} value={mode}>
                        {mode}
                      </option>
                    ))}
                  </select>
                </label>
              ) : (
                <p class="help">
                  Approval mode: <strong>{view.approvalMode}</strong>
                  {view.approvalModes !== undefined &&
                    ` (one of ${view.approvalModes.join(', ')}; start \`rein web --approve MODE\` to change it)`}
                </p>
              ))}
          </>
        )}
        <div class="actions">
          <span class="spacer" />
          <button type="button" onClick={props.onClose}>
            Close
          </button>
        </div>
      </div>
    </div>
  );
}
