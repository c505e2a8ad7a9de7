// The wire shapes the browser reads: durable log events and the server's live state (plain JSON).

/** One durable log event as the server streams it. */
export interface LogEvent {
  type: string;
  seq: number;
  time: number;
  data: unknown;
  surfaceOp?: unknown;
  sourceEventSeqs?: number[];
}

/** A content block of a message. */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'image'; mediaType: string; data?: string; url?: string }
  | { type: 'tool-call'; id: string; name: string; arguments: string }
  | { type: 'tool-result'; toolCallId: string; content: Block[]; isError?: boolean };

/** A message of the log. */
export interface WireMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: Block[];
  source: { kind: string; provider?: string; model?: string; [key: string]: unknown };
}

/** Token counts of one model call. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/** A failure with its stable code. */
export interface Failure {
  message: string;
  code: string;
  status?: number;
}

/** A pending approval request. */
export interface ApprovalRequest {
  requestId: string;
  sessionId: string;
  turn: number;
  step: number;
  callId: string;
  name: string;
  arguments: string;
  reason?: string;
}

/** The live state of a session. */
export interface LiveState {
  sessionId: string;
  live: boolean;
  status: 'idle' | 'running';
  inbox: { nextTurn: WireMessage[]; nextStep: WireMessage[] };
  approvals: ApprovalRequest[];
  model?: { provider: string; model: string; reasoningEffort?: string };
  length: number;
}

/** One row of the session list. */
export interface SessionRow {
  id: string;
  title?: string;
  cwd?: string;
  createdAt: number;
  updatedAt: number;
  turns: number;
  events: number;
  parentSession?: string;
  live: boolean;
  status: 'idle' | 'running';
  cost?: number;
}

/** One model of the picker. */
export interface ModelRow {
  provider: string;
  model: string;
  label?: string;
  contextWindow?: number;
  pricing?: { input: number; cachedInput?: number; cacheWrite?: number; output: number };
  reasoning?: boolean;
  demo?: boolean;
}

/** What the settings panel shows. */
export interface SettingsView {
  providers: { provider: string; configured: boolean; source?: string; hint?: string }[];
  approvalMode?: string;
  approvalModes?: string[];
  configPath?: string;
  help?: string;
  editable?: boolean;
  approvalModeEditable?: boolean;
}
