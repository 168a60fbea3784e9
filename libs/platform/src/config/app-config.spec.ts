import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './app-config.js';

const dataDir = () => mkdtempSync(join(tmpdir(), 'cfg-'));

describe('loadConfig', () => {
  it('reads the outbox retry interval, with MAIL_RETRY_INTERVAL_MS as its older name', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).outboxRetryIntervalMs).toBe(30_000);
    expect(loadConfig({ DATA_DIR: dataDir(), MAIL_RETRY_INTERVAL_MS: '45000' }).outboxRetryIntervalMs).toBe(
      45_000,
    );
    expect(
      loadConfig({ DATA_DIR: dataDir(), MAIL_RETRY_INTERVAL_MS: '45000', OUTBOX_RETRY_INTERVAL_MS: '60000' })
        .outboxRetryIntervalMs,
    ).toBe(60_000);
    expect(() => loadConfig({ DATA_DIR: dataDir(), OUTBOX_RETRY_INTERVAL_MS: '10' })).toThrow(
      /OUTBOX_RETRY_INTERVAL_MS/,
    );
  });

  it('applies the documented defaults', () => {
    const config = loadConfig({ DATA_DIR: dataDir() });
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      defaultPlan: 'sandbox',
      trustProxy: false,
      workers: true,
      webhookAllowPrivateNetworks: false,
      bodyLimitBytes: 1024 * 1024,
      bodyShape: { maxObjectKeys: 1000, maxTotalKeys: 10_000 },
      bodyMaxInflateRatio: 100,
      httpTimeouts: { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 72_000 },
      publicUrl: 'http://localhost:3000',
      corsOrigins: ['http://localhost:5173'],
    });
  });

  it('derives the default PUBLIC_URL from PORT, so links and the docs call the port the service listens on', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(
      loadConfig({ DATA_DIR: dataDir(), PORT: '8080', PUBLIC_URL: 'https://gov.example/' }).publicUrl,
    ).toBe('https://gov.example');
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() =>
      loadConfig({ DATA_DIR: dataDir(), HTTP_REQUEST_TIMEOUT_MS: '5000', HTTP_HEADERS_TIMEOUT_MS: '6000' }),
    ).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);
  });

  it.each([
    ['PORT', 'eighty', /PORT/],
    ['PORT', '70000', /PORT/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL/],
    ['DEFAULT_PLAN', 'platinum', /DEFAULT_PLAN/],
    ['PUBLIC_URL', 'not a url', /PUBLIC_URL/],
    ['TRUST_PROXY', 'sometimes', /TRUST_PROXY/],
    ['JWT_SECRET', 'short', /JWT_SECRET/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['BODY_MAX_OBJECT_KEYS', '0', /BODY_MAX_OBJECT_KEYS/],
    ['BODY_MAX_TOTAL_KEYS', 'many', /BODY_MAX_TOTAL_KEYS/],
    ['BODY_MAX_INFLATE_RATIO', '0', /BODY_MAX_INFLATE_RATIO/],
    ['HTTP_REQUEST_TIMEOUT_MS', '10', /HTTP_REQUEST_TIMEOUT_MS/],
  ])('stops with a message naming %s when it is %s', (name, value, pattern) => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: dataDir(), [name]: value })).toThrow(pattern);
  });

  it('enables a social provider when its client id and secret are both set, with the public endpoints', () => {
    const config = loadConfig({
      DATA_DIR: dataDir(),
      OAUTH_GITHUB_CLIENT_ID: 'id',
      OAUTH_GITHUB_CLIENT_SECRET: 'secret',
      OAUTH_GOOGLE_CLIENT_ID: 'only-the-id',
      OAUTH_MICROSOFT_CLIENT_ID: 'ms',
      OAUTH_MICROSOFT_CLIENT_SECRET: 'ms-secret',
      OAUTH_MICROSOFT_TENANT: 'contoso.onmicrosoft.com',
    });
    expect(config.oauthProviders.github).toMatchObject({
      authorizationUrl: 'https://github.com/login/oauth/authorize',
      emailsUrl: 'https://api.github.com/user/emails',
      scope: 'read:user user:email',
    });
    expect(config.oauthProviders.google).toBeNull();
    expect(config.oauthProviders.microsoft?.authorizationUrl).toBe(
      'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize',
    );
  });

  it('refuses http identity-provider endpoints unless SSO_ALLOW_INSECURE_HTTP, and that flag in production', () => {
    const local = {
      DATA_DIR: dataDir(),
      OAUTH_GOOGLE_CLIENT_ID: 'id',
      OAUTH_GOOGLE_CLIENT_SECRET: 'secret',
      OAUTH_GOOGLE_TOKEN_URL: 'http://127.0.0.1:9/token',
    };
    expect(() => loadConfig(local)).toThrow(/OAUTH_GOOGLE_\*: http:\/\/127.0.0.1:9\/token is http/);
    expect(loadConfig({ ...local, SSO_ALLOW_INSECURE_HTTP: 'true' }).oauthProviders.google?.tokenUrl).toBe(
      'http://127.0.0.1:9/token',
    );
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        JWT_SECRET: 'x'.repeat(32),
        DATA_DIR: dataDir(),
        SSO_ALLOW_INSECURE_HTTP: 'true',
      }),
    ).toThrow(/SSO_ALLOW_INSECURE_HTTP: not allowed/);
  });

  it('reads SSO_DNS_SERVERS as IP addresses with optional ports, and refuses anything else', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).ssoDnsServers).toBeNull();
    expect(
      loadConfig({ DATA_DIR: dataDir(), SSO_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2,[::1]:53' }).ssoDnsServers,
    ).toEqual(['127.0.0.1:5353', '10.0.0.2', '[::1]:53']);
    for (const bad of [
      'dns.example:53',
      '127.0.0.1:0',
      '127.0.0.1:70000',
      '127.0.0.1,,',
      '999.1.1.1',
      '[::g]:53',
    ]) {
      expect(() => loadConfig({ DATA_DIR: dataDir(), SSO_DNS_SERVERS: bad }), bad).toThrow(/SSO_DNS_SERVERS/);
    }
  });

  it('limits SCIM to 600 requests per 15 minutes by default, per token and per IP', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).scimRateLimit).toEqual({ max: 600, windowMs: 900_000 });
    expect(loadConfig({ DATA_DIR: dataDir(), SCIM_RATE_LIMIT_MAX: '50' }).scimRateLimit.max).toBe(50);
  });

  it('reads the SAML SP keys as PEM pairs: both or neither, escaped line breaks, the certificate of that key', () => {
    const fixture = (name: string) =>
      readFileSync(join(import.meta.dirname, '../../../../test/fixtures', name), 'utf8');
    const key = fixture('saml-sp.key.pem');
    const cert = fixture('saml-sp.cert.pem');
    expect(loadConfig({ DATA_DIR: dataDir() }).samlSp).toEqual({ decryption: null, signing: null });
    const escaped = loadConfig({
      DATA_DIR: dataDir(),
      SAML_SP_SIGNING_KEY: key.replace(/\n/g, '\\n'),
      SAML_SP_SIGNING_CERT: cert.replace(/\n/g, '\\n'),
    }).samlSp;
    expect(escaped.signing).toEqual({ key: key.trim() + '\n', cert: cert.trim() + '\n' });
    expect(escaped.decryption).toBeNull();
    expect(() => loadConfig({ DATA_DIR: dataDir(), SAML_SP_DECRYPTION_KEY: key })).toThrow(
      /SAML_SP_DECRYPTION_KEY\/_CERT: set both or neither/,
    );
    expect(() =>
      loadConfig({
        DATA_DIR: dataDir(),
        SAML_SP_SIGNING_KEY: key,
        SAML_SP_SIGNING_CERT: fixture('saml-idp.cert.pem'),
      }),
    ).toThrow(/the certificate is not for that key/);
    expect(() =>
      loadConfig({ DATA_DIR: dataDir(), SAML_SP_SIGNING_KEY: 'not a key', SAML_SP_SIGNING_CERT: cert }),
    ).toThrow(/a PEM private key and a PEM certificate are required/);
  });

  it('requires JWT_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir() })).toThrow(/JWT_SECRET: required/);
  });

  it('generates a development secret once, keeps it in the data directory with mode 0600, and reuses it', () => {
    const dir = dataDir();
    const first = loadConfig({ DATA_DIR: dir }).jwtSecret;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({ DATA_DIR: dir }).jwtSecret).toBe(first);
    expect(readFileSync(join(dir, 'jwt-secret'), 'utf8')).toBe(first);
    expect(statSync(join(dir, 'jwt-secret')).mode & 0o777).toBe(0o600);
  });

  it('requires AUDIT_SIGNING_KEY in production and accepts only a PEM Ed25519 private key', () => {
    const production = { NODE_ENV: 'production', DATA_DIR: dataDir(), JWT_SECRET: 'x'.repeat(32) };
    expect(() => loadConfig(production)).toThrow(/AUDIT_SIGNING_KEY: required/);
    const ed25519 = generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    // Newlines written as \n (one-line environment files) are read as newlines.
    const oneLine = ed25519.trim().replace(/\n/g, '\\n');
    expect(loadConfig({ ...production, AUDIT_SIGNING_KEY: oneLine }).auditSigningKey).toBe(ed25519);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    for (const bad of [rsa, 'not a key']) {
      expect(() => loadConfig({ ...production, AUDIT_SIGNING_KEY: bad })).toThrow(
        /AUDIT_SIGNING_KEY: must be a PEM Ed25519 private key/,
      );
    }
  });

  it('generates a development audit signing key once, with mode 0600, and reuses it', () => {
    const dir = dataDir();
    const first = loadConfig({ DATA_DIR: dir }).auditSigningKey;
    expect(createPrivateKey(first).asymmetricKeyType).toBe('ed25519');
    expect(loadConfig({ DATA_DIR: dir }).auditSigningKey).toBe(first);
    expect(statSync(join(dir, 'audit-signing-key.pem')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.startsWith('audit-signing-key.pem.'))).toEqual([]);
  });

  it('reads the checkpoint interval: one variable for both, the specific ones winning', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).auditCheckpointInterval).toEqual({
      entries: 10_000,
      minutes: 60,
    });
    expect(
      loadConfig({ DATA_DIR: dataDir(), AUDIT_CHECKPOINT_INTERVAL: '30' }).auditCheckpointInterval,
    ).toEqual({
      entries: 30,
      minutes: 30,
    });
    expect(
      loadConfig({
        DATA_DIR: dataDir(),
        AUDIT_CHECKPOINT_INTERVAL: '30',
        AUDIT_CHECKPOINT_INTERVAL_ENTRIES: '500',
      }).auditCheckpointInterval,
    ).toEqual({ entries: 500, minutes: 30 });
    expect(() => loadConfig({ DATA_DIR: dataDir(), AUDIT_CHECKPOINT_INTERVAL_MINUTES: '0' })).toThrow(
      ConfigError,
    );
  });

  it('parses TRUST_PROXY as a flag, a hop count or a list of addresses', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
    ]);
    expect(loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: 'fd00::/8,::1' }).trustProxy).toEqual([
      'fd00::/8',
      '::1',
    ]);
    expect(loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  it.each([['10.0.0.0/33'], ['fd00::/129'], ['999.1.1.1'], ['10.0.0.1/8/9'], ['::g'], ['100'], ['1,2']])(
    'refuses TRUST_PROXY=%s, neither a hop count nor addresses/CIDRs',
    (value) => {
      expect(() => loadConfig({ DATA_DIR: dataDir(), TRUST_PROXY: value })).toThrow(/TRUST_PROXY/);
    },
  );

  describe('in production', () => {
    const production = () => ({
      NODE_ENV: 'production',
      DATA_DIR: dataDir(),
      JWT_SECRET: 'x'.repeat(32),
      AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519')
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
    });

    it('starts with a hop count or proxy addresses as TRUST_PROXY', () => {
      expect(loadConfig({ ...production(), TRUST_PROXY: '1' }).trustProxy).toBe(1);
      expect(loadConfig({ ...production(), TRUST_PROXY: '10.0.0.0/8' }).trustProxy).toEqual(['10.0.0.0/8']);
    });

    it("refuses TRUST_PROXY=true, which trusts the client's own X-Forwarded-For", () => {
      expect(() => loadConfig({ ...production(), TRUST_PROXY: 'true' })).toThrow(ConfigError);
      expect(() => loadConfig({ ...production(), TRUST_PROXY: 'true' })).toThrow(
        /TRUST_PROXY: true is not allowed when NODE_ENV=production/,
      );
    });

    it('refuses WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, as it refuses SSO_ALLOW_INSECURE_HTTP', () => {
      expect(() => loadConfig({ ...production(), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })).toThrow(
        /WEBHOOK_ALLOW_PRIVATE_NETWORKS: not allowed when NODE_ENV=production/,
      );
      expect(() => loadConfig({ ...production(), SSO_ALLOW_INSECURE_HTTP: 'true' })).toThrow(
        /SSO_ALLOW_INSECURE_HTTP: not allowed when NODE_ENV=production/,
      );
      expect(
        loadConfig({ ...production(), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }).webhookAllowPrivateNetworks,
      ).toBe(false);
      expect(
        loadConfig({ DATA_DIR: dataDir(), NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
          .webhookAllowPrivateNetworks,
      ).toBe(true);
    });
  });
});
