// Turns appended to a live session by hand, for store tests and for the child processes they start
// (this module imports no test runner, so a plain `node --import tsx` child can use it).
import type { Session } from '../../src/internal.ts';
import { createAssistantMessage, createUserMessage } from '../../src/internal.ts';

const source = { kind: 'model' as const, provider: 'scripted', model: 'test-model' };

/** Appends one completed text turn to a live session. */
export function appendTextTurn(session: Session, prompt: string, answer: string): void {
  const turn = session.lastTurn + 1;
  session.append('turn/start', { turn });
  session.append('step/start', { turn, step: 1 });
  session.append('user/message', createUserMessage(prompt), { surfaceOp: 'append' });
  session.append(
    'assistant/message',
    {
      turn,
      step: 1,
      message: createAssistantMessage([{ type: 'text', text: answer }], source),
      usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 500 },
    },
    { surfaceOp: 'append' },
  );
  session.append('step/end', { turn, step: 1 });
  session.append('turn/end', { turn, reason: { kind: 'completed' } });
}

/** Appends a turn cut off while running tools: two calls asked for, only the first started. */
export function appendOpenToolTurn(session: Session): void {
  const turn = session.lastTurn + 1;
  session.append('turn/start', { turn });
  session.append('step/start', { turn, step: 1 });
  session.append('user/message', createUserMessage('read two files'), { surfaceOp: 'append' });
  session.append(
    'assistant/message',
    {
      turn,
      step: 1,
      message: createAssistantMessage(
        [
          { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
          { type: 'tool-call', id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
        ],
        source,
      ),
    },
    { surfaceOp: 'append' },
  );
  session.append('tool/call', {
    turn,
    step: 1,
    callId: 'call_a',
    name: 'read_file',
    arguments: '{"path":"a"}',
  });
}
