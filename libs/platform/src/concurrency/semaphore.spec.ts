import { describe, expect, it } from 'vitest';
import { Semaphore, SemaphoreFullError } from './semaphore.js';

describe('Semaphore', () => {
  it('lets `max` holders in, queues the next in order, and refuses beyond the queue', async () => {
    const semaphore = new Semaphore(2, 1);
    const order: string[] = [];
    await semaphore.acquire();
    await semaphore.acquire();
    const third = semaphore.acquire().then(() => order.push('third'));
    await expect(semaphore.acquire()).rejects.toBeInstanceOf(SemaphoreFullError);
    await Promise.resolve();
    expect(order).toEqual([]);
    semaphore.release();
    await third;
    expect(order).toEqual(['third']);
    semaphore.release();
    semaphore.release();
    // Every place is free again: two holders get in at once.
    await semaphore.acquire();
    await semaphore.acquire();
  });

  it('releases the place when the work fails', async () => {
    const semaphore = new Semaphore(1, 0);
    await expect(semaphore.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(semaphore.run(() => Promise.resolve(7))).resolves.toBe(7);
  });
});
