import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { z } from 'zod';

export const PLANS = ['sandbox', 'scale', 'governance', 'enterprise', 'custom'] as const;
export type Plan = (typeof PLANS)[number];

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const url = z.url({ protocol: /^https?$/ });

/** Environment variables read at start-up. Every entry is documented in env-reference.ts (docs/configuration.md). */
const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(500).default(20),
  DATA_DIR: z.string().min(1).default('./.data'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  ENCRYPTION_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  AUTH_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(100),
  AUTH_RATE_LIMIT_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(15 * 60 * 1000),
  CPI_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(60),
  SCIM_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(600),
  SCIM_RATE_LIMIT_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(15 * 60_000),
  CPI_RATE_LIMIT_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(15 * 60 * 1000),
  PDF_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(10),
  PDF_RATE_LIMIT_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(60 * 60 * 1000),
  AUDIT_RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(60),
  AUDIT_RATE_LIMIT_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(60 * 60 * 1000),
  OUTBOX_RETRY_INTERVAL_MS: z.coerce.number().int().min(1000).optional(),
  /** The older name of OUTBOX_RETRY_INTERVAL_MS (mail was the outbox's first topic). */
  MAIL_RETRY_INTERVAL_MS: z.coerce.number().int().min(1000).optional(),
  PUBLIC_URL: url.optional(),
  APP_URL: url.default('http://localhost:5173'),
  CORS_ORIGINS: z.string().optional(),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Governance Service <no-reply@localhost>'),
  DEFAULT_PLAN: z.enum(PLANS).default('sandbox'),
  CHROMIUM_PATH: z.string().optional(),
  /** Where to look for Chromium when CHROMIUM_PATH is unset, in order: `system` paths, the `bundled` package. */
  CHROMIUM_SOURCES: z
    .string()
    .default('system,bundled')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(['system', 'bundled']))),
  PDF_RENDER_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  PDF_MAX_CONCURRENT_RENDERS: z.coerce.number().int().min(1).max(16).default(2),
  AUDIT_FULL_VERIFY_MAX_AGE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 60 * 60 * 1000),
  AUDIT_SIGNING_KEY: z.string().min(1).optional(),
  AUDIT_CHECKPOINT_INTERVAL: z.coerce.number().int().min(1).max(10_000_000).optional(),
  AUDIT_CHECKPOINT_INTERVAL_ENTRIES: z.coerce.number().int().min(1).max(10_000_000).optional(),
  AUDIT_CHECKPOINT_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(525_600).optional(),
  TRACE_RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(60 * 60 * 1000),
  ORG_DELETION_GRACE_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  ORG_ERASURE_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(60 * 60 * 1000),
  REPORT_SCHEDULER_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  ALERT_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  INCIDENT_NOTICE_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v, ctx) => parseTrustProxy(v, ctx)),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WORKERS: z.enum(['on', 'off']).default('on'),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  SSO_ALLOW_INSECURE_HTTP: bool.default(false),
  OAUTH_GITHUB_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_GITHUB_AUTHORIZATION_URL: url.optional(),
  OAUTH_GITHUB_TOKEN_URL: url.optional(),
  OAUTH_GITHUB_USERINFO_URL: url.optional(),
  OAUTH_GITHUB_EMAILS_URL: url.optional(),
  OAUTH_GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_GOOGLE_AUTHORIZATION_URL: url.optional(),
  OAUTH_GOOGLE_TOKEN_URL: url.optional(),
  OAUTH_GOOGLE_USERINFO_URL: url.optional(),
  OAUTH_MICROSOFT_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_MICROSOFT_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_MICROSOFT_AUTHORIZATION_URL: url.optional(),
  OAUTH_MICROSOFT_TOKEN_URL: url.optional(),
  OAUTH_MICROSOFT_USERINFO_URL: url.optional(),
  OAUTH_MICROSOFT_TENANT: z
    .string()
    .regex(/^[A-Za-z0-9.-]{1,100}$/, 'a tenant id or domain')
    .default('common'),
  SSO_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  SSO_DNS_SERVERS: z
    .string()
    .optional()
    .transform((v, ctx) => parseDnsServers(v, ctx)),
  SAML_SP_DECRYPTION_KEY: z.string().min(1).optional(),
  SAML_SP_DECRYPTION_CERT: z.string().min(1).optional(),
  SAML_SP_SIGNING_KEY: z.string().min(1).optional(),
  SAML_SP_SIGNING_CERT: z.string().min(1).optional(),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  BODY_MAX_OBJECT_KEYS: z.coerce.number().int().min(1).default(1000),
  BODY_MAX_TOTAL_KEYS: z.coerce.number().int().min(1).default(10_000),
  BODY_MAX_INFLATE_RATIO: z.coerce.number().int().min(1).default(100),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1000).default(10_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1000).default(72_000),
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(300_000).default(5000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  INGEST_MAX_BATCH: z.coerce.number().int().min(1).max(1000).default(100),
  INGEST_MAX_PENDING: z.coerce.number().int().min(1).default(10_000),
  INGEST_LOCK_TIMEOUT_MS: z.coerce.number().int().min(10).default(5000),
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  METRICS: z.enum(['on', 'off']).default('on'),
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z
    .string()
    .min(32, 'must be at least 32 characters')
    .max(1024, 'must be at most 1024 characters')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (it is sent in an Authorization header)')
    .optional(),
});

/**
 * `TRUST_PROXY`: `false`; a hop count (the number of proxies in front of the service, each appending the address
 * it received the request from); a comma-separated list of the proxies' addresses or CIDRs; or `true` (every hop,
 * refused in production).
 */
function parseTrustProxy(value: string, ctx: z.RefinementCtx): boolean | number | string[] {
  const v = value.trim();
  if (v === 'true') return true;
  if (v === 'false' || v === '' || v === '0') return false;
  if (/^\d{1,2}$/.test(v)) return Number(v);
  const list = v.split(',').map((s) => s.trim());
  if (list.every(isAddressOrCidr)) return list;
  ctx.addIssue({
    code: 'custom',
    message:
      'must be false, a hop count (1 to 99), a comma-separated list of proxy addresses/CIDRs, or true (not in production)',
  });
  return z.NEVER;
}

function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** A fixed window: at most `max` requests per `windowMs`. */
/** The environment variables the service reads (the names, for documentation checks). */
export const ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

export type EnvVariable = keyof typeof envSchema.shape;

/** The schema's own default of each variable that has one (for the configuration reference's check). */
export function envSchemaDefaults(): Partial<Record<EnvVariable, unknown>> {
  const defaultOf = (schema: z.ZodType): unknown => {
    const def = (schema as unknown as { _zod: { def: { type: string; defaultValue?: unknown; in?: z.ZodType } } })._zod.def;
    if (def.type === 'default') return def.defaultValue;
    if (def.type === 'pipe' && def.in) return defaultOf(def.in);
    return undefined;
  };
  return Object.fromEntries(
    Object.entries(envSchema.shape)
      .map(([name, schema]) => [name, defaultOf(schema as z.ZodType)])
      .filter(([, value]) => value !== undefined),
  );
}

export interface RateLimit {
  max: number;
  windowMs: number;
}

/**
 * The per-user limiters: GET /cpi and GET /cpi/analytics share `cpiRead`; the compliance PDF
 * has `compliancePdf`.
 * See docs/compliance-officers.md, "Human feedback and the compliance-performance indicators (CPI)" and
 * "The compliance PDF"; test/cpi-reads.e2e-spec.ts and test/reports-pdf.e2e-spec.ts, their limiters.
 */
export type UserRateLimitName = 'cpiRead' | 'compliancePdf' | 'auditChain' | 'integrationTest';

export interface AppConfig {
  nodeEnv: 'development' | 'test' | 'production';
  port: number;
  host: string;
  databaseUrl?: string;
  databasePoolMax: number;
  dataDir: string;
  redisUrl?: string;
  jwtSecret: string;
  /** Key material for the secret box; JWT_SECRET is used (under a separate HKDF label) when unset. */
  encryptionKey?: string;
  authRateLimit: RateLimit;
  /** The SCIM limiter (600 per 15 minutes by default), applied per token and per IP address. */
  scimRateLimit: RateLimit;
  /** The per-user limiters that routes name in `@Access({ rateLimit })`. */
  userRateLimits: Record<UserRateLimitName, RateLimit>;
  /** How often the outbox's retry pass claims due messages (mail, and webhooks next). */
  outboxRetryIntervalMs: number;
  publicUrl: string;
  appUrl: string;
  corsOrigins: string[];
  smtpUrl?: string;
  mailFrom: string;
  defaultPlan: Plan;
  chromiumPath?: string;
  /** The compliance PDF's renderer: where Chromium is found, the render timeout, renders at once. */
  pdf: {
    /** Where Chromium is looked for when CHROMIUM_PATH is unset (CHROMIUM_PATH, when set, is the only one tried). */
    chromiumSources: Array<'system' | 'bundled'>;
    renderTimeoutMs: number;
    maxConcurrentRenders: number;
  };
  /**
   * Reports verify the audit chain from its last checkpoint while the last verification from the first entry is at
   * most this old, and from the first entry otherwise (0: always in full).
   */
  auditFullVerifyMaxAgeMs: number;
  /** The Ed25519 private key (PEM) that signs audit checkpoints. */
  auditSigningKey: string;
  /** An organization's chain head is signed after this many new entries or minutes, whichever comes first. */
  auditCheckpointInterval: { entries: number; minutes: number };
  /** How often traces past an organization's retention are purged. */
  traceRetentionIntervalMs: number;
  /**
   * Days between `DELETE /organizations/current` and the erasure of the organization (docs/compliance-officers.md,
   * "Organization deletion").
   */
  orgDeletionGraceDays: number;
  /** How often the erasure job looks for deleted organizations past their grace. */
  orgErasureIntervalMs: number;
  /** How often the scheduled-report scheduler and the incident-notice job look for due work. */
  reportSchedulerIntervalMs: number;
  /** How often alert rules are evaluated (docs/compliance-officers.md, "Alerts"). */
  alertIntervalMs: number;
  incidentNoticeIntervalMs: number;
  /**
   * Which hops of X-Forwarded-For are the service's own proxies (the client address is the first one that is not):
   * false (none: the socket's address), a hop count, the proxies' addresses/CIDRs, or true (every hop; not in
   * production).
   */
  trustProxy: boolean | number | string[];
  logLevel: string;
  workers: boolean;
  webhookAllowPrivateNetworks: boolean;
  /**
   * Social login providers (docs/identity-administrators.md, "Social login"): each enabled when its client id and
   * secret are set, else null.
   */
  oauthProviders: Record<SocialProvider, SocialProviderConfig | null>;
  /** Identity-provider URLs may use plain http (local identity providers in tests); refused in production. */
  ssoAllowInsecureHttp: boolean;
  /** Identity-provider URLs may resolve to loopback, private and link-local addresses (an IdP on the private network). */
  ssoAllowPrivateNetworks: boolean;
  /** DNS servers (`host:port`) for identity-provider names and SSO domain proofs; null: the system resolver. */
  ssoDnsServers: string[] | null;
  /**
   * The SAML service provider's own keys (PEM): with `decryption`, the metadata advertises an encryption key and
   * encrypted assertions are decrypted; with `signing`, AuthnRequests and LogoutRequests are signed.
   */
  samlSp: { decryption: SamlKeyPair | null; signing: SamlKeyPair | null };
  bodyLimitBytes: number;
  /** Shape limits of a JSON body or query (keys per object, keys and array items in all), checked before validation. */
  bodyShape: { maxObjectKeys: number; maxTotalKeys: number };
  /** Decoded bytes per received byte at most for a compressed body. */
  bodyMaxInflateRatio: number;
  /**
   * Socket timeouts: the whole request (headers and body) must arrive within `requestMs`, its headers within
   * `headersMs`; an idle keep-alive connection is closed after `keepAliveMs`.
   */
  httpTimeouts: { requestMs: number; headersMs: number; keepAliveMs: number };
  /** After SIGTERM, how long `/health/ready` answers 503 while requests are still served, before the close. */
  shutdownDrainMs: number;
  shutdownTimeoutMs: number;
  /**
   * Trace ingestion's group commit: traces per transaction at most, traces waiting at most (then 503), and how
   * long a batch waits for an audit-chain lock held by another transaction (then 503).
   */
  ingest: { maxBatch: number; maxPending: number; lockTimeoutMs: number };
  /** Domain events (webhook deliveries' source, the stream's replay) are kept this many days. */
  eventRetentionDays: number;
  /**
   * Where `GET /metrics` is served: on a listener of its own (`port` on `host`, every process, the worker too), and on
   * the main port behind `Authorization: Bearer <token>`. Neither set: not served (metrics are still collected,
   * unless `enabled` is false: METRICS=off, which collects nothing and serves nothing).
   */
  metrics: { enabled: boolean; port?: number; host: string; token?: string };
}

export class ConfigError extends Error {}

/**
 * Parses and validates the environment. A bad value throws a ConfigError whose message names the variable,
 * so start-up stops with a clear reason instead of failing later.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = resolve(e.DATA_DIR);
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      'Invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS',
    );
  }
  if (e.NODE_ENV === 'production' && e.SSO_ALLOW_INSECURE_HTTP) {
    throw new ConfigError(
      'Invalid configuration:\n  SSO_ALLOW_INSECURE_HTTP: not allowed when NODE_ENV=production',
    );
  }
  if (e.NODE_ENV === 'production' && e.WEBHOOK_ALLOW_PRIVATE_NETWORKS) {
    throw new ConfigError(
      'Invalid configuration:\n  WEBHOOK_ALLOW_PRIVATE_NETWORKS: not allowed when NODE_ENV=production',
    );
  }
  // `true` trusts every X-Forwarded-For entry, the ones the client wrote too: each request could name a new client
  // address and get a fresh login-limiter bucket.
  if (e.NODE_ENV === 'production' && e.TRUST_PROXY === true) {
    throw new ConfigError(
      'Invalid configuration:\n  TRUST_PROXY: true is not allowed when NODE_ENV=production (it trusts the ' +
        "client's own X-Forwarded-For); give the number of proxies or their addresses/CIDRs",
    );
  }
  if (e.METRICS === 'off') {
    for (const [name, value] of [['METRICS_PORT', e.METRICS_PORT], ['METRICS_TOKEN', e.METRICS_TOKEN]] as const) {
      if (value !== undefined) {
        throw new ConfigError(
          `Invalid configuration:\n  ${name}: serves metrics, which METRICS=off does not collect; unset one of them`,
        );
      }
    }
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT === e.PORT) {
    throw new ConfigError('Invalid configuration:\n  METRICS_PORT: must differ from PORT');
  }
  if (e.NODE_ENV === 'production' && !e.JWT_SECRET) {
    throw new ConfigError('Invalid configuration:\n  JWT_SECRET: required when NODE_ENV=production');
  }
  if (e.NODE_ENV === 'production' && !e.AUDIT_SIGNING_KEY) {
    throw new ConfigError('Invalid configuration:\n  AUDIT_SIGNING_KEY: required when NODE_ENV=production');
  }
  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    dataDir,
    redisUrl: e.REDIS_URL,
    jwtSecret: e.JWT_SECRET ?? persistedDevSecret(dataDir),
    encryptionKey: e.ENCRYPTION_KEY,
    authRateLimit: { max: e.AUTH_RATE_LIMIT_MAX, windowMs: e.AUTH_RATE_LIMIT_WINDOW_MS },
    scimRateLimit: { max: e.SCIM_RATE_LIMIT_MAX, windowMs: e.SCIM_RATE_LIMIT_WINDOW_MS },
    userRateLimits: {
      cpiRead: { max: e.CPI_RATE_LIMIT_MAX, windowMs: e.CPI_RATE_LIMIT_WINDOW_MS },
      compliancePdf: { max: e.PDF_RATE_LIMIT_MAX, windowMs: e.PDF_RATE_LIMIT_WINDOW_MS },
      auditChain: { max: e.AUDIT_RATE_LIMIT_MAX, windowMs: e.AUDIT_RATE_LIMIT_WINDOW_MS },
      // POST /integrations/:id/test: 10 per user per hour (test/integrations-email-optin.e2e-spec.ts).
      integrationTest: { max: 10, windowMs: 3_600_000 },
    },
    outboxRetryIntervalMs: e.OUTBOX_RETRY_INTERVAL_MS ?? e.MAIL_RETRY_INTERVAL_MS ?? 30_000,
    // Without PUBLIC_URL, links and the docs' server entry point at this process's own port.
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    appUrl: e.APP_URL.replace(/\/+$/, ''),
    corsOrigins: e.CORS_ORIGINS
      ? e.CORS_ORIGINS.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [new URL(e.APP_URL).origin],
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    defaultPlan: e.DEFAULT_PLAN,
    chromiumPath: e.CHROMIUM_PATH,
    pdf: {
      chromiumSources: e.CHROMIUM_SOURCES,
      renderTimeoutMs: e.PDF_RENDER_TIMEOUT_MS,
      maxConcurrentRenders: e.PDF_MAX_CONCURRENT_RENDERS,
    },
    auditFullVerifyMaxAgeMs: e.AUDIT_FULL_VERIFY_MAX_AGE_MS,
    auditSigningKey: e.AUDIT_SIGNING_KEY ? auditSigningKey(e.AUDIT_SIGNING_KEY) : persistedAuditKey(dataDir),
    auditCheckpointInterval: {
      entries: e.AUDIT_CHECKPOINT_INTERVAL_ENTRIES ?? e.AUDIT_CHECKPOINT_INTERVAL ?? 10_000,
      minutes: e.AUDIT_CHECKPOINT_INTERVAL_MINUTES ?? e.AUDIT_CHECKPOINT_INTERVAL ?? 60,
    },
    traceRetentionIntervalMs: e.TRACE_RETENTION_INTERVAL_MS,
    orgDeletionGraceDays: e.ORG_DELETION_GRACE_DAYS,
    orgErasureIntervalMs: e.ORG_ERASURE_INTERVAL_MS,
    reportSchedulerIntervalMs: e.REPORT_SCHEDULER_INTERVAL_MS,
    alertIntervalMs: e.ALERT_INTERVAL_MS,
    incidentNoticeIntervalMs: e.INCIDENT_NOTICE_INTERVAL_MS,
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    workers: e.WORKERS === 'on',
    webhookAllowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    ssoAllowInsecureHttp: e.SSO_ALLOW_INSECURE_HTTP,
    oauthProviders: socialProviders(e),
    ssoAllowPrivateNetworks: e.SSO_ALLOW_PRIVATE_NETWORKS,
    ssoDnsServers: e.SSO_DNS_SERVERS,
    samlSp: {
      decryption: samlKeyPair(e.SAML_SP_DECRYPTION_KEY, e.SAML_SP_DECRYPTION_CERT, 'SAML_SP_DECRYPTION'),
      signing: samlKeyPair(e.SAML_SP_SIGNING_KEY, e.SAML_SP_SIGNING_CERT, 'SAML_SP_SIGNING'),
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    bodyShape: { maxObjectKeys: e.BODY_MAX_OBJECT_KEYS, maxTotalKeys: e.BODY_MAX_TOTAL_KEYS },
    bodyMaxInflateRatio: e.BODY_MAX_INFLATE_RATIO,
    httpTimeouts: {
      requestMs: e.HTTP_REQUEST_TIMEOUT_MS,
      headersMs: e.HTTP_HEADERS_TIMEOUT_MS,
      keepAliveMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    ingest: {
      maxBatch: e.INGEST_MAX_BATCH,
      maxPending: e.INGEST_MAX_PENDING,
      lockTimeoutMs: e.INGEST_LOCK_TIMEOUT_MS,
    },
    eventRetentionDays: e.EVENT_RETENTION_DAYS,
    metrics: {
      enabled: e.METRICS === 'on',
      port: e.METRICS_PORT,
      host: e.METRICS_HOST,
      token: e.METRICS_TOKEN,
    },
  };
}

export type SocialProvider = 'github' | 'google' | 'microsoft';
export const SOCIAL_PROVIDERS: readonly SocialProvider[] = ['github', 'google', 'microsoft'];

export interface SocialProviderConfig {
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
  /** GitHub: the list of the user's addresses, with the primary verified one. */
  emailsUrl?: string;
  scope: string;
}

/** The social providers from the environment: the public endpoints unless overridden (tests run a local provider). */
/** A private key and its certificate, in PEM. */
export interface SamlKeyPair {
  key: string;
  cert: string;
}

/**
 * `<prefix>_KEY` and `<prefix>_CERT` as PEM (a value may write its line breaks as `\n`): both or neither, a private
 * key and a certificate that parse, and the certificate for that key.
 */
function samlKeyPair(key: string | undefined, cert: string | undefined, prefix: string): SamlKeyPair | null {
  if (!key && !cert) return null;
  const fail = (why: string) => new ConfigError(`Invalid configuration:\n  ${prefix}_KEY/_CERT: ${why}`);
  if (!key || !cert) throw fail('set both or neither');
  const pem = (v: string) => v.replace(/\\n/g, '\n').trim() + '\n';
  try {
    const privateKey = createPrivateKey(pem(key));
    const certificate = new X509Certificate(pem(cert));
    if (!certificate.checkPrivateKey(privateKey)) throw fail('the certificate is not for that key');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw fail('a PEM private key and a PEM certificate are required');
  }
  return { key: pem(key), cert: pem(cert) };
}

function socialProviders(e: z.infer<typeof envSchema>): Record<SocialProvider, SocialProviderConfig | null> {
  const tenant = e.OAUTH_MICROSOFT_TENANT;
  const providers: Record<SocialProvider, SocialProviderConfig | null> = {
    github:
      e.OAUTH_GITHUB_CLIENT_ID && e.OAUTH_GITHUB_CLIENT_SECRET
        ? {
            clientId: e.OAUTH_GITHUB_CLIENT_ID,
            clientSecret: e.OAUTH_GITHUB_CLIENT_SECRET,
            authorizationUrl: e.OAUTH_GITHUB_AUTHORIZATION_URL ?? 'https://github.com/login/oauth/authorize',
            tokenUrl: e.OAUTH_GITHUB_TOKEN_URL ?? 'https://github.com/login/oauth/access_token',
            userinfoUrl: e.OAUTH_GITHUB_USERINFO_URL ?? 'https://api.github.com/user',
            emailsUrl: e.OAUTH_GITHUB_EMAILS_URL ?? 'https://api.github.com/user/emails',
            scope: 'read:user user:email',
          }
        : null,
    google:
      e.OAUTH_GOOGLE_CLIENT_ID && e.OAUTH_GOOGLE_CLIENT_SECRET
        ? {
            clientId: e.OAUTH_GOOGLE_CLIENT_ID,
            clientSecret: e.OAUTH_GOOGLE_CLIENT_SECRET,
            authorizationUrl:
              e.OAUTH_GOOGLE_AUTHORIZATION_URL ?? 'https://accounts.google.com/o/oauth2/v2/auth',
            tokenUrl: e.OAUTH_GOOGLE_TOKEN_URL ?? 'https://oauth2.googleapis.com/token',
            userinfoUrl: e.OAUTH_GOOGLE_USERINFO_URL ?? 'https://openidconnect.googleapis.com/v1/userinfo',
            scope: 'openid email profile',
          }
        : null,
    microsoft:
      e.OAUTH_MICROSOFT_CLIENT_ID && e.OAUTH_MICROSOFT_CLIENT_SECRET
        ? {
            clientId: e.OAUTH_MICROSOFT_CLIENT_ID,
            clientSecret: e.OAUTH_MICROSOFT_CLIENT_SECRET,
            authorizationUrl:
              e.OAUTH_MICROSOFT_AUTHORIZATION_URL ??
              `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`,
            tokenUrl:
              e.OAUTH_MICROSOFT_TOKEN_URL ?? `https://login.microsoftonline.com/${tenant}/oauth2/v2.0/token`,
            userinfoUrl: e.OAUTH_MICROSOFT_USERINFO_URL ?? 'https://graph.microsoft.com/oidc/userinfo',
            scope: 'openid email profile',
          }
        : null,
  };
  for (const [name, provider] of Object.entries(providers)) {
    if (!provider) continue;
    for (const endpoint of [
      provider.authorizationUrl,
      provider.tokenUrl,
      provider.userinfoUrl,
      provider.emailsUrl,
    ]) {
      if (endpoint && new URL(endpoint).protocol === 'http:' && !e.SSO_ALLOW_INSECURE_HTTP) {
        throw new ConfigError(
          `Invalid configuration:\n  OAUTH_${name.toUpperCase()}_*: ${endpoint} is http; set SSO_ALLOW_INSECURE_HTTP=true outside production`,
        );
      }
    }
  }
  return providers;
}

/** Outside production a missing JWT_SECRET is generated once and kept in the data directory (mode 0600). */
function persistedDevSecret(dataDir: string): string {
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return secret;
}

/** AUDIT_SIGNING_KEY: a PEM (PKCS #8) Ed25519 private key, newlines as they are or as \\n. */
function auditSigningKey(value: string): string {
  const pem = value.replace(/\\n/g, '\n').trim() + '\n';
  try {
    if (createPrivateKey(pem).asymmetricKeyType === 'ed25519') return pem;
  } catch {
    /* reported below */
  }
  throw new ConfigError('Invalid configuration:\n  AUDIT_SIGNING_KEY: must be a PEM Ed25519 private key');
}

/**
 * Outside production a missing AUDIT_SIGNING_KEY is generated once and kept in the data directory (mode 0600), so
 * that checkpoints stay verifiable with the same key across restarts. Two processes starting together agree on one.
 */
function persistedAuditKey(dataDir: string): string {
  const file = join(dataDir, 'audit-signing-key.pem');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const { privateKey } = generateKeyPairSync('ed25519');
    // Written whole under another name, then linked: a process starting at the same time reads a complete file.
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    chmodSync(draft, 0o600);
    try {
      linkSync(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(draft, { force: true });
    }
  }
  return auditSigningKey(readFileSync(file, 'utf8'));
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** `SSO_DNS_SERVERS`: comma-separated `host:port` (or bare IP addresses, port 53); unset or empty: null. */
function parseDnsServers(value: string | undefined, ctx: z.RefinementCtx): string[] | null {
  if (value === undefined || value.trim() === '') return null;
  const servers = value.split(',').map((s) => s.trim());
  for (const server of servers) {
    const match = /^(?:\[([0-9a-fA-F:]+)\]|([0-9.]+)|([0-9a-fA-F:]+))(?::(\d{1,5}))?$/.exec(server);
    const port = match?.[4] === undefined ? 53 : Number(match[4]);
    const address = match?.[1] ?? match?.[2] ?? match?.[3] ?? '';
    const bad = !match || !isIP(address) || port < 1 || port > 65535;
    if (bad || (match[3] !== undefined && match[4] !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: `"${server.slice(0, 60)}" is not an IP address with an optional :port`,
      });
      return null;
    }
  }
  return servers;
}
