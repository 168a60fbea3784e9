import type { Abstract, Type } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { type AppConfig, type DatabaseHandle, FixedClock } from '#platform';
import { compileTestModule, testConfig } from './app.js';
import { BuilderContext } from './builders.js';
import { freshDatabase } from './database.js';

export interface MediumOptions {
  now?: Date | string;
  config?: Partial<AppConfig>;
}

/**
 * The medium tier: the application's modules with their real repositories on a real database (a clone of the
 * run's template, PostgreSQL or PGlite), without HTTP. A test calls services directly, as a controller would, and
 * reads what they wrote; data comes from the builders, which go through the services as well.
 */
export class MediumContext extends BuilderContext {
  private constructor(
    private readonly moduleRef: TestingModule,
    readonly db: DatabaseHandle,
    readonly clock: FixedClock,
  ) {
    super();
  }

  static async create(options: MediumOptions = {}): Promise<MediumContext> {
    const db = await freshDatabase();
    const clock = new FixedClock(options.now ? new Date(options.now) : new Date());
    // Background work is driven by the tests (runNow, runDue), never by timers.
    const config = testConfig({ workers: false, ...options.config });
    const moduleRef = await compileTestModule({ config, db, clock });
    await moduleRef.init();
    return new MediumContext(moduleRef, db, clock);
  }

  service<T>(type: Type<T> | Abstract<T>): T {
    return this.moduleRef.get(type, { strict: false });
  }

  async close(): Promise<void> {
    await this.moduleRef.close();
  }
}
