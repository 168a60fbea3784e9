/** Thrown by `Semaphore.acquire` when as many callers as allowed are already waiting. */
export class SemaphoreFullError extends Error {
  constructor() {
    super('Too many callers are waiting');
  }
}

/**
 * At most `max` holders at once; the others wait in order, at most `maxWaiting` of them (the next is refused with
 * SemaphoreFullError), so that expensive work (a walk of a whole audit chain, a PDF) cannot pile up without bound.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly max: number,
    private readonly maxWaiting: number,
  ) {}

  acquire(): Promise<void> {
    if (this.active < this.max) {
      this.active += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(new SemaphoreFullError());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Hands the place to the next waiter, or frees it. Call once per successful `acquire`. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active -= 1;
  }

  /** Runs `work` holding a place. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }
}
