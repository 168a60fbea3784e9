import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AppConfig, FixedClock } from '#platform';
import type { SessionsRepository } from '../sessions/sessions.repository.js';
import type { OneTimeTokenService } from '../tokens/one-time-token.service.js';
import {
  REVOCATION_RETENTION_MS,
  REVOKED_TOKENS_PURGE_INTERVAL_MS,
  RevokedTokensPurgeJob,
} from './revoked-tokens-purge.job.js';

function setup(workers: boolean) {
  const purgeExpired = vi.fn<(cutoff: Date) => Promise<number>>().mockResolvedValue(2);
  const purgeSessionsExpiredBefore = vi.fn<(cutoff: Date) => Promise<number>>().mockResolvedValue(0);
  const purgeTokens = vi.fn<() => Promise<number>>().mockResolvedValue(0);
  const clock = new FixedClock(new Date('2026-05-01T10:00:00Z'));
  const job = new RevokedTokensPurgeJob(
    { workers } as AppConfig,
    { purgeExpired, purgeSessionsExpiredBefore } as unknown as SessionsRepository,
    { purgeExpired: purgeTokens } as unknown as OneTimeTokenService,
    clock,
  );
  return { job, purgeExpired, clock };
}

describe('RevokedTokensPurgeJob', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('purges with the clock’s time on each interval when workers are on, and stops on shutdown', async () => {
    const { job, purgeExpired, clock } = setup(true);
    job.onModuleInit();
    expect(purgeExpired).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    expect(purgeExpired).toHaveBeenLastCalledWith(new Date(clock.nowMs() - REVOCATION_RETENTION_MS));
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
    job.onModuleDestroy();
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS * 3);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
  });

  it('does not schedule anything when workers are off', async () => {
    const { job, purgeExpired } = setup(false);
    job.onModuleInit();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS * 3);
    expect(purgeExpired).not.toHaveBeenCalled();
    job.onModuleDestroy();
  });

  it('keeps its schedule after a failed pass', async () => {
    const { job, purgeExpired } = setup(true);
    purgeExpired.mockRejectedValueOnce(new Error('database unavailable'));
    job.onModuleInit();
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS * 2);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
    job.onModuleDestroy();
  });

  it('does not keep the process alive for its timer', () => {
    const unref = vi.spyOn(globalThis, 'setInterval');
    const { job } = setup(true);
    job.onModuleInit();
    const timer = unref.mock.results[0]!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    job.onModuleDestroy();
  });

  it('returns the number of rows purged', async () => {
    const { job } = setup(false);
    await expect(job.purge()).resolves.toBe(2);
  });
});
