import { useRef, useState } from 'preact/hooks';
import type { Attachment } from '../attachments.ts';
import { readAttachments } from '../attachments.ts';

/**
 * The composer: Enter sends (a followup when idle, steering while running); a second button queues.
 * Files and images attach by the button, drag and drop, or paste.
 */
export function Composer(props: {
  running: boolean;
  disabled: boolean;
  /** Whether the selected model accepts images. */
  acceptsImages: boolean;
  onSend: (text: string, mode: 'followup' | 'steer', attachments: readonly Attachment[]) => Promise<boolean>;
}) {
  const [text, setText] = useState('');
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [refused, setRefused] = useState<string[]>([]);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const attach = (files: readonly File[]): void => {
    if (files.length === 0) return;
    void readAttachments(files, props.acceptsImages).then((read) => {
      setAttachments((current) => [...current, ...read.attached]);
      setRefused(read.refused);
    });
  };
  const empty = text.trim() === '' && attachments.length === 0;
  const submit = (mode: 'followup' | 'steer'): void => {
    const value = text;
    const sent = attachments;
    if (empty) return;
    void props.onSend(value, mode, sent).then((ok) => {
      if (!ok) return;
      setText((current) => (current === value ? '' : current));
      setAttachments((current) => current.filter((attachment) => !sent.includes(attachment)));
      setRefused([]);
    });
  };
  const primary: 'followup' | 'steer' = props.running ? 'steer' : 'followup';
  return (
    <form
      class={`composer ${dragging ? 'dragging' : ''}`}
      data-testid="composer"
      onSubmit={(event) => {
        event.preventDefault();
        submit(primary);
      }}
      onDragOver={(event) => {
        if (event.dataTransfer?.types.includes('Files') !== true) return;
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(event) => {
        event.preventDefault();
        setDragging(false);
        attach([...(event.dataTransfer?.files ?? [])]);
      }}
    >
      {(attachments.length > 0 || refused.length > 0) && (
        <div class="attachments">
          {attachments.map((attachment) => (
            <span key={attachment.id} class="attachment" data-testid="attachment">
              {attachment.kind === 'image' ? (
                <img
                  class="attachment-thumb"
                  alt=""
                  src={`data:${attachment.mediaType};base64,${attachment.data}`}
                />
              ) : (
                <span aria-hidden="true">📄</span>
              )}
              <span class="attachment-name">{attachment.name}</span>
              <button
                type="button"
                class="link"
                aria-label={`Remove ${attachment.name}`}
                onClick={() => setAttachments((current) => current.filter((entry) => entry !== attachment))}
              >
                ✕
              </button>
            </span>
          ))}
          {refused.map((reason) => (
            <span key={reason} class="attachment-refused" role="status" data-testid="attachment-refused">
              {reason}
            </span>
          ))}
        </div>
      )}
      <textarea
        aria-label="Message"
        data-testid="composer-input"
        placeholder={
          props.running
            ? 'Steer the running turn… (Enter)  ·  Alt+Enter queues for the next turn'
            : 'Message Rein… (Enter to send, Shift+Enter for a new line; drop or paste files to attach)'
        }
        value={text}
        rows={3}
        disabled={props.disabled}
        onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
        onPaste={(event) => {
          const files = [...(event.clipboardData?.files ?? [])];
          if (files.length === 0) return;
          event.preventDefault();
          attach(files);
        }}
        onKeyDown={(event) => {
          if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
          event.preventDefault();
          submit(event.altKey && props.running ? 'followup' : primary);
        }}
      />
      <div class="composer-actions">
        <button type="submit" class="primary" data-testid="send" disabled={props.disabled || empty}>
          {props.running ? 'Steer now' : 'Send'}
        </button>
        {props.running && (
          <button
            type="button"
            data-testid="queue"
            disabled={props.disabled || empty}
            onClick={() => submit('followup')}
            title="Runs as its own turn after the current one"
          >
            Queue for next turn
          </button>
        )}
        <button
          type="button"
          data-testid="attach"
          title={
            props.acceptsImages
              ? 'Attach images or text files'
              : 'Attach text files (this model takes no images)'
          }
          onClick={() => picker.current?.click()}
        >
          Attach…
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          data-testid="attach-input"
          onChange={(event) => {
            const input = event.target as HTMLInputElement;
            attach([...(input.files ?? [])]);
            input.value = '';
          }}
        />
      </div>
    </form>
  );
}
