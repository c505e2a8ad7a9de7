// The wire shapes the browser reads: durable log events and the server's live state (plain JSON).

import type { AnySessionEvent, ContentBlock, LlmFailure, Message, TokenUsage } from './sdk.ts';

/** One durable log event as the server streams it. */
export type LogEvent = AnySessionEvent;

/** A content block of a message. */
export type Block = ContentBlock;

/** A message of the log. */
export type WireMessage = Message;

/** Token counts of one model call. */
export type Usage = TokenUsage;

/** A failure with its stable code. */
export type Failure = LlmFailure;

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
  /** What the call would change, when its tool can tell (a unified diff; a new file diffs against empty). */
  preview?: { path: string; diff: string; created: boolean };
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
  /** True for a model that accepts images. */
  images?: boolean;
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
