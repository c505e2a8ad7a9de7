import type { WireMessage } from '../types.ts';

/** The queued messages: what steers the next step and what waits for the next turn. */
export function QueuePanel(props: {
  nextStep: readonly WireMessage[];
  nextTurn: readonly WireMessage[];
  onRemove: (id: string) => void;
  onSendNow: (id: string) => void;
}) {
  const rows = [
    ...props.nextStep.map((message) => ({ message, where: 'next step' })),
    ...props.nextTurn.map((message) => ({ message, where: 'next turn' })),
  ];
  if (rows.length === 0) return null;
  return (
    <div class="queue" data-testid="queue-panel">
      <div class="queue-title">Queued</div>
      {rows.map(({ message, where }) => (
        <div class="queued" key={message.id} data-testid="queued-message">
          <span class="chip">{where}</span>
          <span class="queued-text">{textOf(message)}</span>
          {where === 'next turn' && (
            <button type="button" onClick={() => props.onSendNow(message.id)}>
              Send now
            </button>
          )}
          <button type="button" onClick={() => props.onRemove(message.id)}>
            Remove
          </button>
        </div>
      ))}
    </div>
  );
}

function textOf(message: WireMessage): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join(' ');
}
