import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Abstract, Logger, type LoggerService, type ModuleMetadata, type Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { Test, type TestingModule } from '@nestjs/testing';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { AppModule } from '../../apps/api/src/app.module.js';
import { buildOpenApiDocument, setupDocs } from '../../apps/api/src/openapi.js';
import {
  APP_CONFIG,
  type AppConfig,
  Clock,
  configureHttpApp,
  createFastifyAdapter,
  DATABASE,
  type DatabaseHandle,
  FixedClock,
  HTTP_APP_OPTIONS,
  loadConfig,
  newId,
  type Plan,
  type Role,
  SCHEMA_VERSIONS,
  type SchemaVersion,
  VERSION_REGISTRY,
} from '#platform';
import { OrganizationsService } from '#identity';
import { memberships } from '../../libs/identity/src/organizations/organization.schema.js';
import { users } from '../../libs/identity/src/users/user.schema.js';
import { hashPassword } from '../../libs/identity/src/auth/password.js';
import { BuilderContext } from './builders.js';
import { freshDatabase } from './database.js';

export interface TestAppOptions {
  /** Start time of the fixed clock (default: now). */
  now?: Date | string;
  config?: Partial<AppConfig>;
  versions?: readonly SchemaVersion[];
  /** Extra modules mounted beside the application (test-only controllers, for example one that throws). */
  imports?: NonNullable<ModuleMetadata['imports']>;
  /** A database to use instead of a fresh one (a second instance of the application: see `replicaContext`). */
  db?: DatabaseHandle;
  /** Build the OpenAPI document for this context rather than reuse the worker's (a test of the build itself). */
  freshDocument?: boolean;
}

/**
 * The OpenAPI document by public URL (the only setting it reads), built once per worker: it describes AppModule's
 * routes, which are the same for every context of a worker (the database tiers share one module graph per worker),
 * and building it costs about a second. Each context gets its own copy.
 */
const documents = new Map<string, OpenAPIObject>();
function openApiDocument(app: NestFastifyApplication, config: AppConfig, fresh = false): OpenAPIObject {
  let document = fresh ? undefined : documents.get(config.publicUrl);
  if (!document) {
    document = buildOpenApiDocument(app, config);
    documents.set(config.publicUrl, document);
  }
  return structuredClone(document);
}

export interface RequestOptions {
  token?: string;
  apiKey?: string;
  body?: unknown;
  /** Raw payload sent as-is (for malformed JSON). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface Registered {
  token: string;
  user: { id: string; email: string; name: string };
  organization: { id: string; name: string; plan: string };
  password: string;
}

export const TEST_PASSWORD = 'Sup3r-Secret-pass';
let emailCounter = 0;

export function uniqueEmail(prefix = 'user'): string {
  emailCounter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${emailCounter}@example.com`;
}

/**
 * Nest's static Logger in a test: silent, except for the exception filter's "Unhandled error" (a 5xx answer),
 * written to stderr with the error's stack, so that a test that met an unexpected 5xx says why.
 */
const UNHANDLED_ERRORS_TO_STDERR: LoggerService = {
  log: () => undefined,
  warn: () => undefined,
  error: (message: unknown, ...params: unknown[]) => {
    if (!params.includes('Unhandled error')) return;
    const { err, ...rest } = (message ?? {}) as { err?: unknown };
    const cause = err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(`Unhandled error (a 5xx answer): ${JSON.stringify(rest)}\n${cause}\n`);
  },
};

/**
 * The configuration of a test application: silent logs (TEST_LOG_LEVEL, e.g. `error`, shows them: the cause of an
 * unexpected 500), a fixed secret, a scratch data directory, no auth limit.
 */
export function testConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    ...loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      JWT_SECRET: 'test-secret-'.padEnd(48, 'x'),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'gov-data-')),
      PUBLIC_URL: 'http://gov.test',
      APP_URL: 'http://app.gov.test',
      // Suites register and log in far more than 100 times; the limiter suite sets the real limit.
      AUTH_RATE_LIMIT_MAX: '1000000',
      // Which Chromium renders the PDFs: CI runs the PDF suites once with the bundled one and once with Debian's.
      CHROMIUM_PATH: process.env.CHROMIUM_PATH,
      CHROMIUM_SOURCES: process.env.CHROMIUM_SOURCES,
    }),
    ...overrides,
  };
}

/**
 * The application's modules (and `imports`), compiled with the test's configuration, database and fixed clock in
 * place of the real ones: the HTTP tier listens on it, the medium tier uses it as it is.
 */
export function compileTestModule(options: {
  config: AppConfig;
  db: DatabaseHandle;
  clock: FixedClock;
  versions?: readonly SchemaVersion[];
  imports?: NonNullable<ModuleMetadata['imports']>;
}): Promise<TestingModule> {
  return Test.createTestingModule({ imports: [AppModule, ...(options.imports ?? [])] })
    .overrideProvider(APP_CONFIG)
    .useValue(options.config)
    .overrideProvider(DATABASE)
    .useValue(options.db)
    .overrideProvider(Clock)
    .useValue(options.clock)
    .overrideProvider(VERSION_REGISTRY)
    .useValue(options.versions ?? SCHEMA_VERSIONS)
    .compile();
}

/** A booted application on a fresh database, with the fixed clock and helpers to call it over HTTP. */
export class TestContext extends BuilderContext {
  constructor(
    readonly app: NestFastifyApplication,
    readonly db: DatabaseHandle,
    readonly clock: FixedClock,
    readonly config: AppConfig,
  ) {
    super();
  }

  static async create(options: TestAppOptions = {}): Promise<TestContext> {
    const db = options.db ?? (await freshDatabase());
    const clock = new FixedClock(options.now ? new Date(options.now) : new Date());
    const config = testConfig(options.config);
    const moduleRef = await compileTestModule({ ...options, config, db, clock });
    const app = moduleRef.createNestApplication<NestFastifyApplication>(createFastifyAdapter(config), {
      ...HTTP_APP_OPTIONS,
      logger: false,
    });
    // `logger: false` silences Nest's static Logger; the exception filter's "Unhandled error" (a 5xx answer) is kept.
    if (!process.env.TEST_LOG_LEVEL) Logger.overrideLogger(UNHANDLED_ERRORS_TO_STDERR);
    await configureHttpApp(app, config);
    setupDocs(app, openApiDocument(app, config, options.freshDocument));
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    return new TestContext(app, db, clock, config);
  }

  async close(): Promise<void> {
    await this.app.close();
  }

  /** A provider of the application (services, repositories), for builders and white-box checks. */
  service<T>(type: Type<T> | Abstract<T>): T {
    return this.app.get(type, { strict: false });
  }

  async request(method: string, url: string, options: RequestOptions = {}): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers['x-api-key'] = options.apiKey;
    let payload: string | Buffer | undefined = options.payload;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    return this.app.inject({
      method: method as 'GET',
      url,
      headers,
      payload,
      query: options.query,
    });
  }

  get = (url: string, options?: RequestOptions) => this.request('GET', url, options);
  post = (url: string, options?: RequestOptions) => this.request('POST', url, options);
  patch = (url: string, options?: RequestOptions) => this.request('PATCH', url, options);
  delete = (url: string, options?: RequestOptions) => this.request('DELETE', url, options);

  /** Registers a user with a new organization through the API. */
  async register(
    overrides: Partial<{ name: string; email: string; password: string; organizationName: string }> = {},
  ): Promise<Registered> {
    const body = {
      name: 'Test User',
      email: uniqueEmail(),
      password: TEST_PASSWORD,
      organizationName: 'Test Org',
      ...overrides,
    };
    const res = await this.post('/api/v1/auth/register', { body });
    if (res.statusCode !== 201) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
    const data = res.json().data;
    return { ...data, password: body.password };
  }

  async login(email: string, password = TEST_PASSWORD): Promise<string> {
    const res = await this.post('/api/v1/auth/login', { body: { email, password } });
    if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
    return res.json().data.token;
  }

  /**
   * Adds a user with the given role to an organization directly (faster than an invitation round trip) and
   * logs them in through the API.
   */
  async addMember(
    organizationId: string,
    role: Role,
    email = uniqueEmail(role),
  ): Promise<{ userId: string; email: string; token: string }> {
    const now = this.clock.now();
    const userId = newId();
    await this.db.db.insert(users).values({
      id: userId,
      email,
      name: `${role} user`,
      passwordHash: await hashPassword(TEST_PASSWORD),
      createdAt: now,
      updatedAt: now,
    });
    await this.db.db
      .insert(memberships)
      .values({ id: newId(), organizationId, userId, role, isActive: true, createdAt: now, updatedAt: now });
    return { userId, email, token: await this.login(email) };
  }

  async setMembershipActive(organizationId: string, userId: string, isActive: boolean): Promise<void> {
    const { and } = await import('drizzle-orm');
    await this.db.db
      .update(memberships)
      .set({ isActive })
      .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  }

  async setPlan(organizationId: string, plan: Plan): Promise<void> {
    await this.app.get(OrganizationsService).setPlan(organizationId, plan);
  }
}

/**
 * A second instance of the application on the same database, as another replica would run: on PostgreSQL with its
 * own pool (notifications reach it only through NOTIFY), on PGlite on the same handle. Its clock starts at the
 * first one's time. Close it before the first.
 */
export async function replicaContext(ctx: TestContext, options: TestAppOptions = {}): Promise<TestContext> {
  const { replicaHandle, shareHandle } = await import('./database.js');
  const replica = await replicaHandle(ctx.db);
  const db = replica.handle === ctx.db ? shareHandle(ctx.db) : replica.handle;
  return TestContext.create({ now: ctx.clock.now(), config: ctx.config, ...options, db });
}
