/**
 * The durable event types, chunks left out, of a turn in which the model calls one tool that asks for
 * approval, the call is decided and run, and the model answers: the shape every surface's running
 * example logs.
 */
export const approvedToolTurnTypes: readonly string[] = [
  'agent/inbox/spliced',
  'turn/start',
  'agent/inbox/spliced',
  'step/start',
  'user/message',
  'request/header',
  'request/context',
  'assistant/message',
  'tool/call',
  'tool/approval-requested',
  'tool/approval-decided',
  'tool/result',
  'step/end',
  'step/start',
  'assistant/message',
  'step/end',
  'turn/end',
];
