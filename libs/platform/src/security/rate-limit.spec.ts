import { afterEach, describe, expect, it, vi } from 'vitest';
import { Clock } from '../clock/clock.js';
import type { AppConfig } from '../config/app-config.js';
import { RateLimitService, RedisRateLimitStore } from './rate-limit.js';

describe('RateLimitService with the shared (Redis) store', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("tells a window's first request the whole window and not a second more, however long Redis took", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-03-01T12:00:00.000Z'));
    // Redis answers 40 ms after the request was sent, with the whole window left (its first hit).
    vi.spyOn(RedisRateLimitStore.prototype, 'hit').mockImplementation(async (_key, windowMs) => {
      vi.setSystemTime(Date.now() + 40);
      return { count: 1, resetAt: Date.now() + windowMs };
    });
    // Nothing listens there: every hit is answered by the stub above.
    const service = new RateLimitService({ redisUrl: 'redis://127.0.0.1:1' } as AppConfig, new Clock());
    try {
      const decision = await service.check('auth:192.0.2.1', { max: 3, windowMs: 60_000 });
      expect(decision).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 60 });
    } finally {
      await service.onApplicationShutdown();
    }
  });
});
