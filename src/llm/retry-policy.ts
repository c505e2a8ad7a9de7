import type { LlmErrorCode } from './llm-error.ts';

/** A route's retry policy, captured when its adapter is registered. */
export type RetryPolicy =
  | {
      mode: 'normal';
      maxRetries: number;
      retryableCodes: readonly (LlmErrorCode | (string & {}))[];
      initialDelayMs: number;
      maxDelayMs: number;
      jitterRatio: number;
    }
  | { mode: 'always'; initialDelayMs: number; maxDelayMs: number; jitterRatio: number };

/** The default policy: five retries of transient failures, 500 ms doubling to 10 s, 10 % jitter. */
export const defaultRetryPolicy: RetryPolicy = Object.freeze({
  mode: 'normal',
  maxRetries: 5,
  retryableCodes: Object.freeze(['EMPTY_RESPONSE', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT'] as const),
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  jitterRatio: 0.1,
});
