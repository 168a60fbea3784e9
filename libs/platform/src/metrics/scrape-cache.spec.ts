import { describe, expect, it, vi } from 'vitest';
import { SCRAPE_CACHE_MS, scrapeCache } from './metrics.js';

describe('scrapeCache', () => {
  it('reads at most once per 5 s by its clock, however often it is called, and calls at once share the read', async () => {
    let now = 1_000_000;
    const read = vi.fn(async () => undefined);
    const collect = scrapeCache(read, { now: () => now, onError: () => undefined });
    await Promise.all([collect(), collect(), collect()]);
    expect(read).toHaveBeenCalledTimes(1);
    now += SCRAPE_CACHE_MS - 1;
    await collect();
    expect(read).toHaveBeenCalledTimes(1);
    now += 1;
    await collect();
    expect(read).toHaveBeenCalledTimes(2);
    // A clock set back reads again.
    now -= 60_000;
    await collect();
    expect(read).toHaveBeenCalledTimes(3);
  });

  it('never rejects: a failed read is reported once until a read succeeds again', async () => {
    let now = 0;
    let fail = true;
    const read = vi.fn(async () => {
      if (fail) throw new Error('database unavailable');
    });
    const onError = vi.fn();
    const collect = scrapeCache(read, { now: () => now, onError, ttlMs: 10 });
    await expect(collect()).resolves.toBeUndefined();
    now += 10;
    await expect(collect()).resolves.toBeUndefined();
    expect(read).toHaveBeenCalledTimes(2);
    expect(onError).toHaveBeenCalledTimes(1);
    fail = false;
    now += 10;
    await collect();
    fail = true;
    now += 10;
    await collect();
    expect(onError).toHaveBeenCalledTimes(2);
  });

  it('does not reject when the read throws before returning a promise', async () => {
    const onError = vi.fn();
    const collect = scrapeCache(
      () => {
        throw new Error('no connection');
      },
      { now: () => 0, onError },
    );
    await expect(collect()).resolves.toBeUndefined();
    expect(onError).toHaveBeenCalledOnce();
  });
});
