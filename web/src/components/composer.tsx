import { useState } from 'preact/hooks';

/** The composer: Enter sends (a followup when idle, steering while running); a second button queues. */
export function Composer(props: {
  running: boolean;
  disabled: boolean;
  onSend: (text: string, mode: 'followup' | 'steer') => Promise<boolean>;
}) {
  const [text, setText] = useState('');
  const submit = (mode: 'followup' | 'steer'): void => {
    const value = text;
    if (value.trim() === '') return;
    void props.onSend(value, mode).then((sent) => {
      if (sent) setText((current) => (current === value ? '' : current));
    });
  };
  const primary: 'followup' | 'steer' = props.running ? 'steer' : 'followup';
  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        submit(primary);
      }}
    >
      <textarea
        aria-label="Message"
        data-testid="composer-input"
        placeholder={
          props.running
            ? 'Steer the running turn… (Enter)  ·  Alt+Enter queues for the next turn'
            : 'Message Rein… (Enter to send, Shift+Enter for a new line)'
        }
        value={text}
        rows={3}
        disabled={props.disabled}
        onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
        onKeyDown={(event) => {
          if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
          event.preventDefault();
          submit(event.altKey && props.running ? 'followup' : primary);
        }}
      />
      <div class="composer-actions">
        <button
          type="submit"
          class="primary"
          data-testid="send"
          disabled={props.disabled || text.trim() === ''}
        >
          {props.running ? 'Steer now' : 'Send'}
        </button>
        {props.running && (
          <button
            type="button"
            data-testid="queue"
            disabled={props.disabled || text.trim() === ''}
            onClick={() => submit('followup')}
            title="Runs as its own turn after the current one"
          >
            Queue for next turn
          </button>
        )}
      </div>
    </form>
  );
}
