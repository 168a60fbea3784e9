import type { Abstract, Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { AppModule } from '../../apps/api/src/app.module.js';
import { APP_CONFIG, type AppConfig, Clock, DATABASE, type DatabaseHandle, FixedClock } from '#platform';
import { testConfig } from './app.js';
import {
  buildAgent,
  buildOrganization,
  buildPolicy,
  type BuilderHost,
  type TestAgent,
  type TestOrganization,
  type TestPolicy,
} from './builders.js';
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
export class MediumContext implements BuilderHost {
  private constructor(
    private readonly moduleRef: TestingModule,
    readonly db: DatabaseHandle,
    readonly clock: FixedClock,
  ) {}

  static async create(options: MediumOptions = {}): Promise<MediumContext> {
    const db = await freshDatabase();
    const clock = new FixedClock(options.now ? new Date(options.now) : new Date());
    // Background work is driven by the tests (runNow, runDue), never by timers.
    const config = testConfig({ workers: false, ...options.config });
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(APP_CONFIG)
      .useValue(config)
      .overrideProvider(DATABASE)
      .useValue(db)
      .overrideProvider(Clock)
      .useValue(clock)
      .compile();
    await moduleRef.init();
    return new MediumContext(moduleRef, db, clock);
  }

  service<T>(type: Type<T> | Abstract<T>): T {
    return this.moduleRef.get(type, { strict: false });
  }

  newOrganization(overrides?: Parameters<typeof buildOrganization>[1]): Promise<TestOrganization> {
    return buildOrganization(this, overrides);
  }

  newAgent(organizationId: string, name?: string): Promise<TestAgent> {
    return buildAgent(this, organizationId, name);
  }

  newPolicy(organizationId: string, policy: TestPolicy): Promise<string> {
    return buildPolicy(this, organizationId, policy);
  }

  async close(): Promise<void> {
    await this.moduleRef.close();
  }
}
