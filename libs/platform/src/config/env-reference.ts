import type { EnvVariable } from './app-config.js';

/** The groups of the configuration reference, in the order it lists them. */
export const ENV_GROUPS = {
  server: 'Server',
  database: 'Database and cache',
  secrets: 'Secrets and keys',
  http: 'HTTP limits and timeouts',
  limits: 'Rate limits',
  ingestion: 'Trace ingestion',
  events: 'Events and webhooks',
  mail: 'Mail and the outbox',
  reports: 'Reports and the compliance PDF',
  audit: 'Audit log',
  jobs: 'Background jobs, retention and deletion',
  sso: 'Single sign-on and social login',
} as const;

export interface EnvDoc {
  group: keyof typeof ENV_GROUPS;
  /** The default as a reader sees it; where the schema has a default, a test holds the two equal. */
  default: string;
  /** A credential or key: keep it out of logs, images and version control. */
  secret?: true;
  description: string;
}

const ENDPOINT_OVERRIDE =
  'endpoint override (a local provider in tests; http only with `SSO_ALLOW_INSECURE_HTTP`)';

/** The five variables of a social-login provider. */
function socialLogin<P extends 'GITHUB' | 'GOOGLE' | 'MICROSOFT'>(provider: P, name: string) {
  const endpoint: EnvDoc = {
    group: 'sso',
    default: "the provider's public endpoint",
    description: ENDPOINT_OVERRIDE,
  };
  const path = provider.toLowerCase();
  return {
    [`OAUTH_${provider}_CLIENT_ID`]: {
      group: 'sso',
      default: '(unset)',
      description:
        `social login with ${name}: enabled when both the client id and secret are set, else its routes answer 404; ` +
        `redirect URI \`PUBLIC_URL/api/v1/auth/${path}/callback\``,
    },
    [`OAUTH_${provider}_CLIENT_SECRET`]: {
      group: 'sso',
      default: '(unset)',
      secret: true,
      description: `the client secret of social login with ${name}`,
    },
    [`OAUTH_${provider}_AUTHORIZATION_URL`]: endpoint,
    [`OAUTH_${provider}_TOKEN_URL`]: endpoint,
    [`OAUTH_${provider}_USERINFO_URL`]: endpoint,
  } as Record<
    `OAUTH_${P}_${'CLIENT_ID' | 'CLIENT_SECRET' | 'AUTHORIZATION_URL' | 'TOKEN_URL' | 'USERINFO_URL'}`,
    EnvDoc
  >;
}

/**
 * Every environment variable of the configuration schema (app-config.ts), documented beside it: the type makes a
 * variable without an entry, or an entry without a variable, a compile error, and `docs/configuration.md` is
 * generated from this (`npm run docs:config`; a test fails when it is stale).
 */
export const ENV_REFERENCE: { readonly [K in EnvVariable]: EnvDoc } = {
  NODE_ENV: {
    group: 'server',
    default: '`development`',
    description: '`development`, `test` or `production`',
  },
  PORT: { group: 'server', default: '`3000`', description: 'the port the HTTP server listens on' },
  HOST: { group: 'server', default: '`0.0.0.0`', description: 'the address the HTTP server listens on' },
  DATABASE_URL: {
    group: 'database',
    default: '(unset)',
    secret: true,
    description: '`postgres://…`; unset: embedded PGlite persisted in `DATA_DIR`',
  },
  DATABASE_POOL_MAX: {
    group: 'database',
    default: '`20`',
    description: 'node-postgres pool size per process',
  },
  DATA_DIR: {
    group: 'database',
    default: '`./.data`',
    description: 'embedded database and the generated development JWT secret',
  },
  REDIS_URL: {
    group: 'database',
    default: '(unset)',
    secret: true,
    description:
      "`redis://…`; every rate limiter's counts (auth, SCIM, CPI, PDF, audit, integrations, per-user limits), shared by every replica (without it each process counts alone)",
  },
  JWT_SECRET: {
    group: 'secrets',
    default: 'generated in dev',
    secret: true,
    description:
      'HS256 key, at least 32 characters; **required when `NODE_ENV=production`**. Outside production it is generated once and kept in `DATA_DIR/jwt-secret` (mode 0600)',
  },
  ENCRYPTION_KEY: {
    group: 'secrets',
    default: 'derived from `JWT_SECRET`',
    secret: true,
    description:
      'key material (32+ characters) for secrets the service reads back: TOTP secrets, queued mail, invitation tokens, SSO client secrets, webhook secrets, integration URLs, sign-in state (PKCE, social login); HKDF-derived, AES-256-GCM',
  },
  AUTH_RATE_LIMIT_MAX: {
    group: 'limits',
    default: '`100`',
    description: 'the auth limiter: requests per IP per window over every `/auth` route',
  },
  AUTH_RATE_LIMIT_WINDOW_MS: {
    group: 'limits',
    default: '`900000`',
    description: "the auth limiter's window",
  },
  CPI_RATE_LIMIT_MAX: {
    group: 'limits',
    default: '`60`',
    description:
      'the CPI read limiter: requests per user per window over `GET /cpi` and `GET /cpi/analytics`',
  },
  SCIM_RATE_LIMIT_MAX: {
    group: 'limits',
    default: '`600`',
    description:
      'the SCIM limiter (600 requests per 15 minutes by default), per token and per IP address, both applied',
  },
  SCIM_RATE_LIMIT_WINDOW_MS: {
    group: 'limits',
    default: '`900000`',
    description: "the SCIM limiter's window",
  },
  CPI_RATE_LIMIT_WINDOW_MS: {
    group: 'limits',
    default: '`900000`',
    description: "the CPI read limiter's window",
  },
  PDF_RATE_LIMIT_MAX: {
    group: 'limits',
    default: '`10`',
    description: 'the compliance PDF limiter: requests per user per window',
  },
  PDF_RATE_LIMIT_WINDOW_MS: {
    group: 'limits',
    default: '`3600000`',
    description: "the compliance PDF limiter's window",
  },
  AUDIT_RATE_LIMIT_MAX: {
    group: 'limits',
    default: '`60`',
    description:
      "the limiter of the audit chain's reads of the whole log (`GET /audit/verify`, `GET /audit/export`, `POST /audit/checkpoints`): requests per user per window",
  },
  AUDIT_RATE_LIMIT_WINDOW_MS: { group: 'limits', default: '`3600000`', description: "that limiter's window" },
  MAIL_RETRY_INTERVAL_MS: {
    group: 'mail',
    default: '(unset)',
    description: 'the older name of `OUTBOX_RETRY_INTERVAL_MS`, read when that one is unset',
  },
  OUTBOX_RETRY_INTERVAL_MS: {
    group: 'mail',
    default: '`30000`',
    description:
      "how often the outbox's retry pass claims due messages (mail, event fan-out and webhook attempts; `MAIL_RETRY_INTERVAL_MS` is read as its older name)",
  },
  PUBLIC_URL: {
    group: 'server',
    default: '`http://localhost:$PORT`',
    description: "public base URL of this service (links, the docs' server entry, SAML entity ids)",
  },
  APP_URL: {
    group: 'server',
    default: '`http://localhost:5173`',
    description: 'the dashboard; its origin is the default CORS origin',
  },
  CORS_ORIGINS: {
    group: 'server',
    default: 'origin of `APP_URL`',
    description: 'comma-separated allowed origins; `*` allows any (without credentials)',
  },
  SMTP_URL: {
    group: 'mail',
    default: '(unset)',
    secret: true,
    description:
      'outgoing mail (`smtp://` or `smtps://`, credentials in the URL); unset keeps mail in the outbox (`npm run cli -- mail:outbox` shows it)',
  },
  MAIL_FROM: {
    group: 'mail',
    default: '`Governance Service <no-reply@localhost>`',
    description: 'the sender of outgoing mail',
  },
  DEFAULT_PLAN: {
    group: 'jobs',
    default: '`sandbox`',
    description: 'plan of new organizations: `sandbox`, `scale`, `governance`, `enterprise`, `custom`',
  },
  CHROMIUM_PATH: {
    group: 'reports',
    default: '(unset)',
    description: 'the Chromium or Chrome that prints the compliance PDF; when set, the only one tried',
  },
  CHROMIUM_SOURCES: {
    group: 'reports',
    default: '`system,bundled`',
    description:
      'where Chromium is looked for when `CHROMIUM_PATH` is unset, in order: the system paths, then the one inside the `@sparticuz/chromium` package',
  },
  PDF_RENDER_TIMEOUT_MS: {
    group: 'reports',
    default: '`60000`',
    description: "a render's time limit (then 503)",
  },
  PDF_MAX_CONCURRENT_RENDERS: {
    group: 'reports',
    default: '`2`',
    description: 'the renders at once per process (32 more queue)',
  },
  AUDIT_FULL_VERIFY_MAX_AGE_MS: {
    group: 'audit',
    default: '`86400000`',
    description:
      'reports verify the audit chain from the prefix the last verification passed while the last full verification is younger than this, in full otherwise (0: always in full)',
  },
  AUDIT_SIGNING_KEY: {
    group: 'secrets',
    default: 'generated in dev',
    secret: true,
    description:
      'PEM Ed25519 private key that signs audit checkpoints (`openssl genpkey -algorithm ed25519`); **required when `NODE_ENV=production`**. Outside production it is generated once into `DATA_DIR/audit-signing-key.pem` (mode 0600). `\\n` in the value is read as a newline',
  },
  AUDIT_CHECKPOINT_INTERVAL: {
    group: 'audit',
    default: '',
    description: 'sets both of the above at once (entries and minutes); the specific variables win',
  },
  AUDIT_CHECKPOINT_INTERVAL_ENTRIES: {
    group: 'audit',
    default: '`10000`',
    description: "sign an organization's chain head after this many new entries…",
  },
  AUDIT_CHECKPOINT_INTERVAL_MINUTES: {
    group: 'audit',
    default: '`60`',
    description: '…or once its oldest unsigned entry is this many minutes old, whichever comes first',
  },
  TRACE_RETENTION_INTERVAL_MS: {
    group: 'jobs',
    default: '`3600000`',
    description: "how often traces past an organization's `traceRetentionDays` are purged",
  },
  ORG_DELETION_GRACE_DAYS: {
    group: 'jobs',
    default: '`30`',
    description:
      "days between `DELETE /organizations/current` and the erasure of the organization's data; the operator can restore it until then (0: erased at the next run)",
  },
  ORG_ERASURE_INTERVAL_MS: {
    group: 'jobs',
    default: '`3600000`',
    description: 'how often the erasure job looks for deleted organizations past their grace',
  },
  REPORT_SCHEDULER_INTERVAL_MS: {
    group: 'jobs',
    default: '`60000`',
    description: 'how often the scheduler claims due scheduled reports',
  },
  ALERT_INTERVAL_MS: {
    group: 'jobs',
    default: '`60000`',
    description: 'how often alert rules are evaluated',
  },
  INCIDENT_NOTICE_INTERVAL_MS: {
    group: 'jobs',
    default: '`60000`',
    description: 'how often the incident deadline notices are looked for',
  },
  TRUST_PROXY: {
    group: 'server',
    default: '`false`',
    description:
      "which `X-Forwarded-For` hops are your own proxies, and so the client IP (the auth limiter's key, audit entries): a hop count (`1`: one proxy in front, the client is the address it appended) or a comma-separated list of the proxies' addresses/CIDRs (`10.0.0.0/8,fd00::/8`). With a hop count the service must be reachable only through those proxies. `true` trusts every hop, the ones a client writes itself, so a client could name a fresh address per request and get past the login limiter: start-up refuses it with `NODE_ENV=production`",
  },
  LOG_LEVEL: { group: 'server', default: '`info`', description: '`fatal` … `trace`, or `silent`' },
  WORKERS: {
    group: 'server',
    default: '`on`',
    description:
      "`off` runs the API without background jobs (the outbox's retry pass, purges); the job scheduler then starts none",
  },
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: {
    group: 'events',
    default: '`false`',
    description:
      'allow webhook and integration targets on loopback, private and link-local addresses (local receivers in development and tests); start-up refuses it with `NODE_ENV=production`',
  },
  SSO_ALLOW_INSECURE_HTTP: {
    group: 'sso',
    default: '`false`',
    description:
      'let OIDC issuers and SAML entry points use plain http (local identity providers in tests); start-up refuses it with `NODE_ENV=production`',
  },
  ...socialLogin('GITHUB', 'GitHub'),
  OAUTH_GITHUB_EMAILS_URL: {
    group: 'sso',
    default: "the provider's public endpoint",
    description:
      "endpoint override of GitHub's e-mail list (a local provider in tests; http only with `SSO_ALLOW_INSECURE_HTTP`)",
  },
  ...socialLogin('GOOGLE', 'Google'),
  ...socialLogin('MICROSOFT', 'Microsoft'),
  OAUTH_MICROSOFT_TENANT: {
    group: 'sso',
    default: '`common`',
    description: 'the Microsoft tenant of social login (an id or a domain)',
  },
  SSO_ALLOW_PRIVATE_NETWORKS: {
    group: 'sso',
    default: '`false`',
    description:
      'let identity-provider URLs resolve to loopback, private and link-local addresses (an IdP inside the private network)',
  },
  SSO_DNS_SERVERS: {
    group: 'sso',
    default: 'unset (the system resolver)',
    description:
      "comma-separated DNS servers, `host:port` (`[v6]:port` for IPv6; port 53 when omitted), that resolve identity providers' names (OIDC, SAML, social login: every outbound call to them) and the TXT records that prove an SSO domain",
  },
  SAML_SP_DECRYPTION_KEY: {
    group: 'sso',
    default: '(unset)',
    secret: true,
    description:
      'PEM: with `SAML_SP_DECRYPTION_CERT`, decrypt encrypted SAML assertions; the SP metadata then advertises the certificate for encryption. Both or neither',
  },
  SAML_SP_DECRYPTION_CERT: {
    group: 'sso',
    default: '(unset)',
    description: 'PEM: the certificate of `SAML_SP_DECRYPTION_KEY`',
  },
  SAML_SP_SIGNING_KEY: {
    group: 'sso',
    default: '(unset)',
    secret: true,
    description:
      'PEM (line breaks may be written `\\n`): with `SAML_SP_SIGNING_CERT`, sign SAML AuthnRequests and LogoutRequests; the SP metadata lists the certificate. Both or neither; start-up checks they match',
  },
  SAML_SP_SIGNING_CERT: {
    group: 'sso',
    default: '(unset)',
    description: 'PEM: the certificate of `SAML_SP_SIGNING_KEY`',
  },
  BODY_LIMIT_BYTES: {
    group: 'http',
    default: '`1048576`',
    description: 'JSON body limit, after decompression (413 `PAYLOAD_TOO_LARGE` above it)',
  },
  BODY_MAX_OBJECT_KEYS: {
    group: 'http',
    default: '`1000`',
    description:
      'keys of one JSON object at most, in a body or a query string (400 above it, before validation)',
  },
  BODY_MAX_TOTAL_KEYS: {
    group: 'http',
    default: '`10000`',
    description:
      'object keys plus array items of a whole body or query string at most (400 above it, before parsing)',
  },
  BODY_MAX_INFLATE_RATIO: {
    group: 'http',
    default: '`100`',
    description:
      'a `gzip`/`deflate`/`br` body, and a gzip OTLP export, may decode to at most this many times its size on the wire (413 above it; checked past 64 KiB)',
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    group: 'http',
    default: '`30000`',
    description:
      'the whole request, headers and body, must arrive within this time (then 408 `REQUEST_TIMEOUT` and the connection closes)',
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    group: 'http',
    default: '`10000`',
    description: 'the request headers must arrive within this time (at most `HTTP_REQUEST_TIMEOUT_MS`)',
  },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: {
    group: 'http',
    default: '`72000`',
    description:
      'an idle keep-alive connection is closed after this time (above common load-balancer idle timeouts of 60 s)',
  },
  SHUTDOWN_DRAIN_MS: {
    group: 'server',
    default: '`5000`',
    description:
      'after `SIGTERM`, `/health/ready` answers 503 at once while every request is still served for this long, so that the load balancer stops routing here before the server closes (at most 300000; 0 closes at once)',
  },
  SHUTDOWN_TIMEOUT_MS: {
    group: 'server',
    default: '`10000`',
    description:
      'after the drain (`SHUTDOWN_DRAIN_MS`; from the signal on the worker, which has none), the process exits (code 1) if the close of requests in flight, jobs, background mail and the pool has not ended by then',
  },
  INGEST_MAX_BATCH: {
    group: 'ingestion',
    default: '`100`',
    description: 'traces written by one group-commit transaction at most',
  },
  INGEST_MAX_PENDING: {
    group: 'ingestion',
    default: '`10000`',
    description:
      'traces accepted and not yet committed, per process; past it `POST /traces` and OTLP answer 503 `SERVICE_UNAVAILABLE` with `Retry-After: 1` and store nothing (an OTLP export with more spans than this: 413)',
  },
  INGEST_LOCK_TIMEOUT_MS: {
    group: 'ingestion',
    default: '`5000`',
    description:
      'how long a group-commit batch waits for an audit-chain lock held by another transaction; then its traces answer 503',
  },
  EVENT_RETENTION_DAYS: {
    group: 'events',
    default: '`30`',
    description:
      "domain events (the stream's replay, webhook deliveries' source) and finished deliveries are kept this many days",
  },
  METRICS: {
    group: 'server',
    default: '`on`',
    description:
      '`off` collects no metrics at all (no counter, no hook per request, no event-loop monitor) and refuses `METRICS_PORT` and `METRICS_TOKEN`; for measuring what metrics cost (`npm run bench:observability`), or where another agent observes the process',
  },
  METRICS_PORT: {
    group: 'server',
    default: '(unset)',
    description:
      'a port on which every process (API and worker) serves `GET /metrics` (Prometheus text format) and nothing else, on `METRICS_HOST`, without credentials unless `METRICS_TOKEN` is set (then the same bearer token as the main port); must differ from `PORT`. Unset: no such listener (docs/operators.md, "Metrics")',
  },
  METRICS_HOST: {
    group: 'server',
    default: '`127.0.0.1`',
    description:
      'the address the `METRICS_PORT` listener binds: loopback by default, so that an unauthenticated port is not reachable from the network until you say so (`0.0.0.0` for a scraper in another host or pod; restrict who reaches it)',
  },
  METRICS_TOKEN: {
    group: 'server',
    default: '(unset)',
    secret: true,
    description:
      'at least 32 printable characters: the main port then answers `GET /metrics` to `Authorization: Bearer <token>` (401 `UNAUTHORIZED` without it or with another), and so does the `METRICS_PORT` listener. Unset: `/metrics` on the main port is 404',
  },
};

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The configuration reference as Markdown: one table per group, in the order of ENV_GROUPS. */
export function renderConfigurationReference(): string {
  const out = [
    '# Configuration reference',
    '',
    '<!-- Generated from libs/platform/src/config/env-reference.ts by `npm run docs:config`; do not edit. -->',
    '',
    'Everything is read from the environment and validated at start-up; a bad value stops the process (exit code 78)',
    'with a message naming the variable. An empty value counts as unset. A variable marked secret is a credential or a',
    'key: keep it out of logs, images and version control.',
    '',
  ];
  for (const [group, title] of Object.entries(ENV_GROUPS)) {
    const rows = Object.entries(ENV_REFERENCE).filter(([, doc]) => doc.group === group);
    if (!rows.length) continue;
    out.push(`## ${title}`, '', '| Variable | Default | Secret | Meaning |', '|---|---|---|---|');
    for (const [name, doc] of rows) {
      out.push(
        `| \`${name}\` | ${cell(doc.default)} | ${doc.secret ? 'yes' : ''} | ${cell(doc.description)} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}
