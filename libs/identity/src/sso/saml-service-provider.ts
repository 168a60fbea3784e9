import { Inject, Injectable } from '@nestjs/common';
import { type CacheProvider, SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import { APP_CONFIG, type AppConfig, Clock } from '#platform';
import { SamlRequestsRepository } from './saml-requests.repository.js';
import { EMAIL_FORMAT } from './saml-xml.js';
import type { SsoSettings, StoredSamlSettings } from './sso-config.types.js';
import { SsoSignIn } from './sso-sign-in.js';
import type { SamlRequestRow } from './sso.schema.js';

/**
 * An AuthnRequest's answer may come this long after it was sent (test/sso-saml-refusals.e2e-spec.ts); a LogoutRequest's too.
 */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;
/** The clock skew tolerated on an assertion's time window. */
export const CLOCK_SKEW_MS = 60_000;
/** An assertion is refused this long after its IssueInstant whatever its NotOnOrAfter says... */
const MAX_ASSERTION_AGE_MS = 24 * 3_600_000;
/** ...so its id is remembered this long, which covers every assertion that could still be accepted. */
export const ASSERTION_ID_TTL_MS = MAX_ASSERTION_AGE_MS + 2 * CLOCK_SKEW_MS;

export type SamlRequestKind = 'authn' | 'logout';

/** What node-saml's request cache starts from: the browser of a new AuthnRequest, or the request already read. */
export interface CacheOptions {
  browserHash?: string | null;
  known?: SamlRequestRow;
}

/**
 * This service as the SAML service provider of each organization, shared by sign-in and single logout: its URLs
 * (entity id `PUBLIC_URL/api/v1/auth/saml/metadata/:orgId`, one ACS for all), node-saml configured for an
 * organization, and the requests sent whose answer it awaits (rows of `saml_requests`, 10 minutes).
 */
@Injectable()
export class SamlServiceProvider {
  constructor(
    private readonly signIns: SsoSignIn,
    private readonly requests: SamlRequestsRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'publicUrl' | 'samlSp'>,
  ) {}

  get acsUrl(): string {
    return `${this.config.publicUrl}/api/v1/auth/saml/callback`;
  }

  get logoutCallbackUrl(): string {
    return `${this.config.publicUrl}/api/v1/auth/saml/logout/callback`;
  }

  entityId(organizationId: string): string {
    return `${this.config.publicUrl}/api/v1/auth/saml/metadata/${organizationId}`;
  }

  /** The organization's SAML settings when it may sign in with SAML now, else undefined. */
  async samlSettings(
    organizationId: string,
  ): Promise<{ settings: SsoSettings; saml: StoredSamlSettings } | undefined> {
    const settings = await this.signIns.usable(organizationId);
    if (settings?.config.provider !== 'saml' || !settings.config.saml) return undefined;
    return { settings, saml: settings.config.saml };
  }

  /** The unexpired request with this id, of this kind. */
  async pendingRequest(id: string, kind: SamlRequestKind): Promise<SamlRequestRow | undefined> {
    if (id.length > 128) return undefined;
    return this.requests.findPending(id, kind, this.clock.now());
  }

  /** Deletes the request, reporting whether this call did (a request is answered once). */
  takeRequest(organizationId: string, id: string, kind: SamlRequestKind): Promise<boolean> {
    return this.requests.take(organizationId, id, kind, this.clock.now());
  }

  /** node-saml configured as this organization's service provider. */
  provider(
    organizationId: string,
    saml: StoredSamlSettings,
    kind: SamlRequestKind,
    cache: CacheOptions = {},
  ): SAML {
    const { decryption, signing } = this.config.samlSp;
    return new SAML({
      issuer: this.entityId(organizationId),
      audience: this.entityId(organizationId),
      callbackUrl: this.acsUrl,
      entryPoint: saml.entryPoint,
      idpCert: saml.idpCertificate,
      ...(saml.idpIssuer ? { idpIssuer: saml.idpIssuer } : {}),
      logoutUrl: saml.logoutUrl ?? undefined,
      logoutCallbackUrl: this.logoutCallbackUrl,
      identifierFormat: EMAIL_FORMAT,
      // A signed response or a signed assertion: node-saml then requires the other only when the first is missing.
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      acceptedClockSkewMs: CLOCK_SKEW_MS,
      maxAssertionAgeMs: MAX_ASSERTION_AGE_MS,
      // A LogoutResponse's InResponseTo is checked here against the row (node-saml reads it on Responses only).
      validateInResponseTo: kind === 'authn' ? ValidateInResponseTo.always : ValidateInResponseTo.never,
      requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
      cacheProvider: this.requestCache(organizationId, kind, cache),
      // The IdP decides how the user authenticates (passwordless, MFA); asking for a password context breaks it.
      disableRequestedAuthnContext: true,
      signatureAlgorithm: 'sha256',
      digestAlgorithm: 'sha256',
      ...(signing ? { privateKey: signing.key, publicCert: signing.cert } : {}),
      ...(decryption ? { decryptionPvk: decryption.key } : {}),
    });
  }

  /**
   * node-saml's request-id cache, backed by `saml_requests` and scoped to one organization and one kind: an id of
   * another organization is unknown here. Removal is left to `takeRequest`, which does it atomically once the
   * answer is accepted; the expiry is the row's, on this service's clock. node-saml asks for an id more than once
   * per response: the answer is remembered, starting from the row the caller already read (`known`).
   */
  private requestCache(
    organizationId: string,
    kind: SamlRequestKind,
    { browserHash = null, known }: CacheOptions,
  ): CacheProvider {
    const pending = new Map<string, boolean>();
    if (known) pending.set(known.id, known.organizationId === organizationId);
    return {
      saveAsync: async (key, value) => {
        const now = this.clock.now();
        await this.requests.insert(organizationId, {
          id: key,
          kind,
          browserHash,
          expiresAt: new Date(now.getTime() + SAML_REQUEST_TTL_MS),
          createdAt: now,
        });
        return { value, createdAt: now.getTime() };
      },
      getAsync: async (key) => {
        let ok = pending.get(key);
        if (ok === undefined) {
          const row = await this.pendingRequest(key, kind);
          ok = row !== undefined && row.organizationId === organizationId;
          pending.set(key, ok);
        }
        // node-saml compares the value with its own (real) clock; the expiry that counts is the row's.
        return ok ? new Date().toISOString() : null;
      },
      removeAsync: async (key) => key,
    };
  }
}
