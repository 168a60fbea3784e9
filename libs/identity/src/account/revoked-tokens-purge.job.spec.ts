import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FixedClock, JobScheduler } from '#platform';
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
  const scheduler = new JobScheduler({ workers });
  const job = new RevokedTokensPurgeJob(
    scheduler,
    { purgeExpired, purgeSessionsExpiredBefore } as unknown as SessionsRepository,
    { purgeExpired: purgeTokens } as unknown as OneTimeTokenService,
    clock,
  );
  /** Registers the job and boots the scheduler, as the application's start does. */
  const start = () => {
    job.onModuleInit();
    scheduler.onApplicationBootstrap();
  };
  return { job, scheduler, start, purgeExpired, clock };
}

describe('RevokedTokensPurgeJob', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('purges with the clock’s time on each interval when workers are on, and stops on shutdown', async () => {
    const { scheduler, start, purgeExpired, clock } = setup(true);
    start();
    expect(purgeExpired).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    expect(purgeExpired).toHaveBeenLastCalledWith(new Date(clock.nowMs() - REVOCATION_RETENTION_MS));
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
    await scheduler.beforeApplicationShutdown();
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS * 3);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
  });

  it('does not schedule anything when workers are off', async () => {
    const { scheduler, start, purgeExpired } = setup(false);
    start();
    expect(scheduler.names).toEqual(['revoked-tokens-purge']);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS * 3);
    expect(purgeExpired).not.toHaveBeenCalled();
  });

  it('keeps its schedule after a failed pass', async () => {
    const { scheduler, start, purgeExpired } = setup(true);
    purgeExpired.mockRejectedValueOnce(new Error('database unavailable'));
    start();
    await vi.advanceTimersByTimeAsync(REVOKED_TOKENS_PURGE_INTERVAL_MS * 2);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
    await scheduler.beforeApplicationShutdown();
  });

  it('returns the number of rows purged', async () => {
    const { job } = setup(false);
    await expect(job.purge()).resolves.toBe(2);
  });
});
