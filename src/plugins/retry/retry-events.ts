import type { LlmFailure } from '../../llm/index.ts';
import { registerSessionEventTypes } from '../../session/index.ts';

/** The durable record of one retry, appended before its wait: which failure, which attempt, how long. */
export interface LlmRetryRecord {
  turn: number;
  /** The failed (already closed) step the retry answers. */
  step: number;
  /** 1 for the first retry of a failure chain. */
  attempt: number;
  delayMs: number;
  failure: LlmFailure;
  provider: string;
  model: string;
}

declare module '../../session/session-event.ts' {
  interface SessionEventMap {
    'llm/retry': LlmRetryRecord;
  }
}

registerSessionEventTypes(['llm/retry']);
