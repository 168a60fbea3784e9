/** How a call that may be repeated safely is retried. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 5). */
  maxAttempts?: number;
  /** The delay before the first retry, doubled for each one after (default 250 ms). */
  initialDelayMs?: number;
  /** The longest delay between two attempts, `Retry-After` included (default 30 s). */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 5,
  initialDelayMs: 250,
  maxDelayMs: 30_000,
};

/**
 * The delay before attempt `attempt + 1` (after `attempt` failed ones): exponential with jitter (between half and
 * all of it), at least what `Retry-After` asked for, and never more than `maxDelayMs`.
 */
export function retryDelayMs(
  attempt: number,
  options: Required<RetryOptions>,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
): number {
  const exponential = options.initialDelayMs * 2 ** Math.max(0, attempt - 1);
  const jittered = exponential * (0.5 + random() / 2);
  const asked = retryAfterSeconds === undefined ? 0 : retryAfterSeconds * 1000;
  return Math.round(Math.min(options.maxDelayMs, Math.max(jittered, asked)));
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
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
