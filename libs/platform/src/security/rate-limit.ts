import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig, type RateLimit, type UserRateLimitName } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';

export interface RateLimitHit {
  count: number;
  /** Epoch milliseconds at which the window ends. */
  resetAt: number;
}

export interface RateLimitStore {
  hit(key: string, windowMs: number): Promise<RateLimitHit>;
  close(): Promise<void>;
}

const MAX_MEMORY_KEYS = 100_000;

/** Fixed windows in process memory, bounded in size; time from the injectable clock. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, RateLimitHit>();

  constructor(private readonly clock: Clock) {}

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    const now = this.clock.nowMs();
    let entry = this.windows.get(key);
    if (!entry || entry.resetAt <= now) {
      if (entry) this.windows.delete(key);
      if (this.windows.size >= MAX_MEMORY_KEYS) this.evict(now);
      entry = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, entry);
    }
    entry.count += 1;
    return { ...entry };
  }

  private evict(now: number): void {
    for (const [key, entry] of this.windows) if (entry.resetAt <= now) this.windows.delete(key);
    // Still full: drop the oldest windows (insertion order) rather than grow without bound.
    for (const key of this.windows.keys()) {
      if (this.windows.size < MAX_MEMORY_KEYS * 0.9) break;
      this.windows.delete(key);
    }
  }

  async close(): Promise<void> {
    this.windows.clear();
  }
}

// INCR and set the expiry on the first hit of a window, atomically; returns the count and the time left.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

/** How long a request waits for a Redis connection that is still opening before the local window is used. */
const READY_WAIT_MS = 1000;

/** Fixed windows in Redis, shared by every replica. */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;

  constructor(url: string) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.redis.on('error', () => undefined);
  }

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    // Just after start the connection may still be opening: wait for it briefly rather than count this request in
    // one process's memory (where another replica would not see it).
    if (
      this.redis.status === 'connecting' ||
      this.redis.status === 'connect' ||
      this.redis.status === 'wait'
    ) {
      await this.ready();
    }
    const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, `svc:rl:${key}`, String(windowMs))) as [
      number,
      number,
    ];
    return { count, resetAt: Date.now() + ttl };
  }

  /** Resolves when the connection is ready, or after READY_WAIT_MS (the caller then falls back). */
  private ready(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, READY_WAIT_MS);
      this.redis.once('ready', done);
    });
  }

  /** Whether the connection is open and usable now. */
  get isReady(): boolean {
    return this.redis.status === 'ready';
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends (the Retry-After value when refused). */
  resetSeconds: number;
}

/**
 * Fixed-window limiters: the auth limiter (100 requests per IP per 15 minutes over /auth/*) and the per-user ones
 * that routes name in `@Access({ rateLimit })` (the CPI reads). Redis-backed when REDIS_URL is set so that replicas
 * share the count; if Redis cannot be reached the process falls back to its own window rather than refusing
 * everyone.
 */
@Injectable()
export class RateLimitService implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly memory: MemoryRateLimitStore;
  private readonly shared?: RedisRateLimitStore;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.memory = new MemoryRateLimitStore(clock);
    if (config.redisUrl) this.shared = new RedisRateLimitStore(config.redisUrl);
  }

  /** Whether the shared (Redis) store is connected now; undefined without REDIS_URL. */
  sharedStoreReady(): boolean | undefined {
    return this.shared?.isReady;
  }

  checkAuth(ip: string): Promise<RateLimitDecision> {
    return this.check(`auth:${ip}`, this.config.authRateLimit);
  }

  /** Counts one request of a user against a named per-user limiter. */
  checkUser(name: UserRateLimitName, subject: string): Promise<RateLimitDecision> {
    return this.check(`${name}:${subject}`, this.config.userRateLimits[name]);
  }

  /** Counts one request under `key` in the limit's current window. */
  async check(key: string, { max, windowMs }: RateLimit): Promise<RateLimitDecision> {
    let hit: RateLimitHit | undefined;
    let now = 0;
    if (this.shared) {
      try {
        hit = await this.shared.hit(key, windowMs);
        // Read once Redis has answered (resetAt is its time left from then): read before the round trip, a window's
        // first request would be told the window plus a second.
        now = Date.now();
      } catch (err) {
        this.logger.warn(
          { error: (err as Error).message },
          'Shared rate-limit store unavailable; using the local window',
        );
      }
    }
    if (!hit) {
      hit = await this.memory.hit(key, windowMs);
      now = this.clock.nowMs();
    }
    const resetSeconds = Math.max(1, Math.ceil((hit.resetAt - now) / 1000));
    return { allowed: hit.count <= max, limit: max, remaining: Math.max(0, max - hit.count), resetSeconds };
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.memory.close(), this.shared?.close()]);
  }
}
