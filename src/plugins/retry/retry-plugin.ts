import type { AgentRequestErrorPayload, HarnessPlugin, RequestErrorDecision } from '../../agent/index.ts';
import type { RetryPolicy } from '../../llm/index.ts';
import { HarnessError } from '../../llm/index.ts';
import type { AnySessionEvent, ReadonlySessionLog } from '../../session/index.ts';
import type { LlmRetryRecord } from './retry-events.ts';

/** Overrides of the route's retry policy; every field is optional and wins over the route's own. */
export interface RetryPluginOptions {
  /** Retries per failure chain and route; 5 by default. */
  maxRetries?: number;
  /** The first backoff delay; 500 ms by default. */
  initialDelayMs?: number;
  /** The longest backoff wait; 10 s by default. */
  maxDelayMs?: number;
  /**
   * The longest provider Retry-After honoured (the wait is exactly what the vendor asked); 60 s by
   * default. A longer one is not waited for: the failure stands, and its message says how long to wait.
   */
  maxRetryAfterMs?: number;
  /** Spread of the jitter around each backoff delay (0.1 = ±10 %). */
  jitterRatio?: number;
  /** The failure codes worth another attempt. */
  retryableCodes?: readonly string[];
  /** The random source of the jitter, in [0, 1). */
  random?: () => number;
}

/** The policy a retry decision uses: the route's, with the plugin's overrides applied. */
export function effectivePolicy(route: RetryPolicy, options: RetryPluginOptions): RetryPolicy {
  const backoff = {
    initialDelayMs: options.initialDelayMs ?? route.initialDelayMs,
    maxDelayMs: options.maxDelayMs ?? route.maxDelayMs,
    jitterRatio: options.jitterRatio ?? route.jitterRatio,
  };
  if (route.mode === 'always') return { mode: 'always', ...backoff };
  return {
    mode: 'normal',
    maxRetries: options.maxRetries ?? route.maxRetries,
    retryableCodes: options.retryableCodes ?? route.retryableCodes,
    ...backoff,
  };
}

/** The exponential backoff of an attempt: `initial · 2^(attempt−1)`, capped, with jitter, never above the cap. */
export function backoffDelay(
  attempt: number,
  policy: Pick<RetryPolicy, 'initialDelayMs' | 'maxDelayMs' | 'jitterRatio'>,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.initialDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
  const spread = 1 - policy.jitterRatio + 2 * policy.jitterRatio * random();
  return Math.max(0, Math.round(Math.min(base * spread, policy.maxDelayMs)));
}

/**
 * The `llm/retry` records of a failure chain: those of this turn and route logged since the last
 * successful response (a complete `assistant/message`), which resets the count.
 */
export function retriesInChain(
  log: ReadonlySessionLog | readonly AnySessionEvent[],
  turn: number,
  provider: string,
  model: string,
): number {
  let count = 0;
  for (let index = log.length - 1; index >= 0; index--) {
    const type = 'typeAt' in log ? log.typeAt(index) : log[index]!.type;
    if (type !== 'turn/start' && type !== 'assistant/message' && type !== 'llm/retry') continue;
    const event = log.at(index)!;
    if (event.type === 'turn/start') break;
    if (event.type === 'assistant/message' && (event.data as { interrupted?: boolean }).interrupted !== true)
      break;
    if (event.type !== 'llm/retry') continue;
    const record = event.data as LlmRetryRecord;
    if (record.turn === turn && record.provider === provider && record.model === model) count++;
  }
  return count;
}

function validate(options: RetryPluginOptions): void {
  const check = (name: keyof RetryPluginOptions, value: unknown, integer: boolean): void => {
    if (value === undefined) return;
    const valid =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= 0 &&
      (!integer || Number.isSafeInteger(value));
    if (!valid)
      throw new HarnessError(
        'INVALID_OPTIONS',
        `retryPlugin: ${name} must be a non-negative ${integer ? 'integer' : 'number'}`,
      );
  };
  check('maxRetries', options.maxRetries, true);
  check('initialDelayMs', options.initialDelayMs, false);
  check('maxDelayMs', options.maxDelayMs, false);
  check('maxRetryAfterMs', options.maxRetryAfterMs, false);
  check('jitterRatio', options.jitterRatio, false);
  if (options.jitterRatio !== undefined && options.jitterRatio > 1) {
    throw new HarnessError('INVALID_OPTIONS', 'retryPlugin: jitterRatio must be at most 1');
  }
}

/** The longest provider Retry-After the plugin waits for unless told otherwise. */
export const defaultMaxRetryAfterMs = 60_000;

/** Waits `ms`; resolves false at once when the signal aborts (and true when the time is up). */
function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      resolve(false);
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Bounded, classified retry on `agent/request-error`. Under a `normal` policy only the retryable codes
 * (RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT, EMPTY_RESPONSE by default) are retried, up to `maxRetries`
 * per failure chain and route, with exponential backoff and jitter; a provider Retry-After up to
 * `maxRetryAfterMs` (60 s) is waited exactly (above it, the failure stands and says how long to wait). Each retry appends a durable `llm/retry`
 * before its cancellable wait and answers `{ kind: 'retry' }` without calling `next()`; everything else
 * (AUTH, QUOTA, INVALID_REQUEST, CONTEXT_WINDOW_EXCEEDED for compaction…) goes to `next()`.
 */
export function retryPlugin(options: RetryPluginOptions = {}): HarnessPlugin {
  validate(options);
  const random = options.random ?? Math.random;
  const retryAfterLimit = options.maxRetryAfterMs ?? defaultMaxRetryAfterMs;
  return {
    name: 'retry',
    setup(host) {
      return host.hooks.on('agent/request-error', async (payload, next) => {
        if (payload.retryPolicy === undefined) return next();
        const policy = effectivePolicy(payload.retryPolicy, options);
        if (policy.mode === 'always') {
          // Specialised recovery downstream (compaction) gets the first say; backoff is the fallback.
          const downstream = await next();
          if (downstream?.kind === 'retry') return downstream;
          return retry(
            payload,
            policy,
            retriesInChain(payload.agent.session.log, payload.turn, payload.provider, payload.model) + 1,
            random,
            retryAfterLimit,
          );
        }
        if (!policy.retryableCodes.includes(payload.failure.code)) return next();
        const done = retriesInChain(payload.agent.session.log, payload.turn, payload.provider, payload.model);
        if (done >= policy.maxRetries) return next();
        const after = payload.failure.providerRetryAfterMs;
        if (after !== undefined && after > retryAfterLimit) return next();
        return retry(payload, policy, done + 1, random, retryAfterLimit);
      });
    },
  };
}

async function retry(
  payload: AgentRequestErrorPayload,
  policy: RetryPolicy,
  attempt: number,
  random: () => number,
  retryAfterLimit: number,
): Promise<RequestErrorDecision> {
  const after = payload.failure.providerRetryAfterMs;
  const delayMs =
    after !== undefined && after <= retryAfterLimit
      ? Math.round(after)
      : backoffDelay(attempt, policy, random);
  const record: LlmRetryRecord = {
    turn: payload.turn,
    step: payload.step,
    attempt,
    delayMs,
    failure: { ...payload.failure },
    provider: payload.provider,
    model: payload.model,
  };
  payload.agent.session.append('llm/retry', record);
  // A Stop during the wait ends it at once; the loop then sees the aborted signal and closes the turn.
  const elapsed = await wait(delayMs, payload.signal);
  return elapsed ? { kind: 'retry' } : undefined;
}
