import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type TestAppOptions, TestContext } from './app.js';

/**
 * What the tests of a suite share, made once before them and closed after them. `start` makes it, opening each part
 * with `open`; `stop` closes the parts in the reverse order. The fields are set by `start`: read them inside a test
 * (or a hook), never where the suite is declared.
 */
export abstract class SuiteFixture {
  private readonly closers: (() => unknown)[] = [];

  abstract start(): Promise<void>;

  /** Before each test: nothing, unless a suite puts something back (the clock, say). */
  beforeEach(): void {}

  /** Waits for a part of the suite and remembers how to close it. */
  protected async open<T>(made: Promise<T> | T, close: (part: T) => unknown): Promise<T> {
    const part = await made;
    this.closers.push(() => close(part));
    return part;
  }

  /** The suite's application, closed before the parts opened ahead of it. */
  protected openApp(options: TestAppOptions): Promise<TestContext> {
    return this.open(TestContext.create(options), (app) => app.close());
  }

  async stop(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) await close();
  }
}

/** Registers, in the calling `describe`, the suite's `start` before its tests, its `beforeEach`, and its `stop`. */
export function useSuite<T extends SuiteFixture>(suite: T): T {
  beforeAll(() => suite.start());
  beforeEach(() => suite.beforeEach());
  afterAll(() => suite.stop());
  return suite;
}
