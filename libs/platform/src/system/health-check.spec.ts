import { describe, expect, it } from 'vitest';
import { answersWithin } from './system.controller.js';

const never = new Promise<never>(() => undefined);

describe('answersWithin (the health check database probe)', () => {
  it('is true for an answer and false for a failure', async () => {
    expect(await answersWithin(Promise.resolve(1), 100)).toBe(true);
    expect(await answersWithin(Promise.reject(new Error('down')), 100)).toBe(false);
  });

  it('gives up on a query that never answers once its budget is spent', async () => {
    const started = performance.now();
    expect(await answersWithin(never, 60)).toBe(false);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('does not count a stalled event loop against the database', async () => {
    // The answer arrives during a 300 ms stall, longer than the whole 100 ms budget: it is still read.
    let resolveQuery: () => void = () => undefined;
    const query = new Promise<void>((resolve) => (resolveQuery = resolve));
    const check = answersWithin(query, 100);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const until = performance.now() + 300;
    while (performance.now() < until) {
      /* busy */
    }
    setImmediate(resolveQuery); // like a socket read in the poll phase after the stall
    expect(await check).toBe(true);
  });
});
