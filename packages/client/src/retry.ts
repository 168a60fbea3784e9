/** How a call that may be repeated safely is retried. */
export interface RetryOptions {
  /** Attempts in all, the first included: an integer, at least 1 (default 5). */
  maxAttempts?: number;
  /** The delay before the first retry, doubled for each one after: finite, at least 0 (default 250 ms). */
  initialDelayMs?: number;
  /** The longest delay between two attempts, `Retry-After` included: finite, at least 0 (default 30 s). */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 5,
  initialDelayMs: 250,
  maxDelayMs: 30_000,
};

/**
 * The longest delay a timer takes (2^31 - 1 ms, about 24.8 days): `setTimeout` fires a longer one after about 1 ms,
 * so every delay is clamped to it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The retry policy in force: the defaults, overridden by each source in turn, a value at a time (`undefined` keeps
 * the value before it). Throws `TypeError` for a value that is not a usable number.
 */
export function resolveRetry(...sources: (RetryOptions | undefined)[]): Required<RetryOptions> {
  const policy = { ...DEFAULT_RETRY };
  for (const source of sources) {
    if (!source) continue;
    if (source.maxAttempts !== undefined) policy.maxAttempts = source.maxAttempts;
    if (source.initialDelayMs !== undefined) policy.initialDelayMs = source.initialDelayMs;
    if (source.maxDelayMs !== undefined) policy.maxDelayMs = source.maxDelayMs;
  }
  validateRetry(policy);
  return policy;
}

/** Throws `TypeError` unless each value given is usable (an integer >= 1 of attempts, finite delays >= 0). */
export function validateRetry(options: RetryOptions | undefined, what = 'retry'): void {
  if (!options) return;
  if (options.maxAttempts !== undefined) requireAttempts(options.maxAttempts, `${what}.maxAttempts`);
  if (options.initialDelayMs !== undefined) requireDelay(options.initialDelayMs, `${what}.initialDelayMs`);
  if (options.maxDelayMs !== undefined) requireDelay(options.maxDelayMs, `${what}.maxDelayMs`);
}

/** Throws `TypeError` unless `value` is an integer, at least 1. */
export function requireAttempts(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TypeError(`${name} must be an integer of at least 1 (got ${String(value)})`);
  }
}

/** Throws `TypeError` unless `value` is a finite number of milliseconds, at least 0. */
export function requireDelay(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`${name} must be a finite number of milliseconds, at least 0 (got ${String(value)})`);
  }
}

/**
 * The delay before attempt `attempt + 1` (after `attempt` failed ones): exponential with jitter (between half and
 * all of it), at least what `Retry-After` asked for, and never more than `maxDelayMs` (nor than a timer can take).
 */
export function retryDelayMs(
  attempt: number,
  options: Required<RetryOptions>,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
): number {
  const longest = Math.min(options.maxDelayMs, MAX_TIMER_MS);
  const exponential = options.initialDelayMs * 2 ** Math.max(0, attempt - 1);
  const jittered = exponential * (0.5 + random() / 2);
  const asked = retryAfterSeconds === undefined ? 0 : retryAfterSeconds * 1000;
  return Math.round(Math.min(longest, Math.max(jittered, asked)));
}

/**
 * Resolves after `ms` (clamped to 0…`MAX_TIMER_MS`: a longer timer would fire at once), or rejects with the signal's
 * reason once it aborts.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  const delay = Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_TIMER_MS) : ms > 0 ? MAX_TIMER_MS : 0;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delay);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}
