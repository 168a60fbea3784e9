import { X509Certificate } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  canonicalJson,
  Clock,
  type RequestMeta,
  resolveTarget,
  SecretBox,
  sha256Hex,
  ssrfRefusalIn,
  TransactionHost,
} from '#platform';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { checkEndpoints, IdpNetwork } from './oidc-configurations.js';
import {
  type CertificateView,
  type PutSsoConfigDto,
  type SsoCheckDto,
  type SsoConfigDeletedDto,
  type SsoConfigDto,
  type SsoTestResultDto,
} from './dto/sso-config.dto.js';
import { compileRolePattern, type RoleMappingRule } from './role-mapping.js';
import type {
  SsoSettings,
  StoredOidcSettings,
  StoredSamlSettings,
  StoredSsoConfig,
} from './sso-config.types.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';
import { SsoDomainsService } from './sso-domains.service.js';
import type { SsoDomainClaimRow } from './sso.schema.js';

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
const DETAIL_MAX = 300;
const DAY_MS = 86_400_000;

const invalid = (field: string, message: string) => AppError.validation(message, [{ field, message }]);

/** The certificate as PEM, from PEM or the bare base64 body IdP metadata shows; refuses anything else. */
export function certificatePem(
  raw: string,
  field = 'saml.idpCertificate',
): { pem: string; cert: X509Certificate } {
  const text = raw.trim();
  if (/PRIVATE KEY/.test(text))
    throw invalid(field, `${field} must be the IdP's certificate, not a private key`);
  const body = text
    .replace(/-----BEGIN CERTIFICATE-----/, '')
    .replace(/-----END CERTIFICATE-----[\s\S]*$/, '')
    .replace(/\s+/g, '');
  if (body.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) {
    throw invalid(field, `${field} must be a PEM certificate or its base64 body`);
  }
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  try {
    return { pem, cert: new X509Certificate(pem) };
  } catch {
    throw invalid(field, `${field} is not a readable X.509 certificate`);
  }
}

export function certificateView(cert: X509Certificate): CertificateView {
  return {
    subject: cert.subject.replace(/\n/g, ', '),
    validFrom: new Date(cert.validFrom).toISOString(),
    validTo: new Date(cert.validTo).toISOString(),
    fingerprint256: cert.fingerprint256,
  };
}

/**
 * What a test of the IdP vouches for: the provider and its settings as stored, the client secret by the hash of
 * its value (sealed anew on every PUT that sends it, the same secret sent again is the same setting). A PUT that
 * changes any of them needs a new passing test before `enforceSso` may be on.
 */
export function idpFingerprint(config: StoredSsoConfig, openSecret: (sealed: string) => string): string {
  const oidc = config.oidc
    ? { ...config.oidc, clientSecretSealed: sha256Hex(openSecret(config.oidc.clientSecretSealed)) }
    : null;
  // Canonical: a jsonb column gives the keys back in its own order.
  return sha256Hex(canonicalJson({ provider: config.provider, oidc, saml: config.saml ?? null }));
}

/** The error a check shows: its message, without line breaks, bounded. */
function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s+/g, ' ').slice(0, DETAIL_MAX);
}

/**
 * An organization's single sign-on configuration: the provider and its settings, the e-mail domains
 * that route to it (each held by one organization), the role-mapping rules, and a test that contacts the IdP.
 * Owners and admins on plans with `sso`; the client secret is write-only and sealed.
 * See docs/identity-administrators.md, "Single sign-on: the configuration"; test/sso-config.e2e-spec.ts.
 */
@Injectable()
export class SsoConfigService {
  /** The test's calls to the IdP: SSO_DNS_SERVERS, the SSRF guard, connections pinned to the checked address. */
  private readonly network: IdpNetwork;

  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly domains: SsoDomainsRepository,
    private readonly domainClaims: SsoDomainsService,
    private readonly box: SecretBox,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG)
    private readonly config: Pick<
      AppConfig,
      'publicUrl' | 'ssoAllowInsecureHttp' | 'ssoAllowPrivateNetworks' | 'ssoDnsServers'
    >,
  ) {
    this.network = new IdpNetwork(config);
  }

  /** The organization's settings, or undefined when SSO is not configured (for the sign-in flows). */
  async settings(organizationId: string): Promise<SsoSettings | undefined> {
    const fields = await this.organizations.ssoFields(organizationId);
    const config = fields?.ssoConfig as StoredSsoConfig | null | undefined;
    if (!fields || !config?.provider) return undefined;
    return {
      config,
      emailDomains: await this.domains.list(organizationId),
      roleMappingRules: (fields.roleMappingRules ?? []) as RoleMappingRule[],
    };
  }

  async get(actor: Actor): Promise<SsoConfigDto> {
    const settings = await this.settings(actor.organizationId);
    if (!settings) throw AppError.notFound('SSO configuration');
    return this.view(actor.organizationId, settings, await this.domains.claims(actor.organizationId));
  }

  async put(actor: Actor, dto: PutSsoConfigDto, meta: RequestMeta): Promise<SsoConfigDto> {
    const org = actor.organizationId;
    const rules = (dto.roleMappingRules ?? []).map((rule, i) => {
      const compiled = compileRolePattern(rule.pattern);
      if (typeof compiled === 'string') throw invalid(`roleMappingRules.${i}.pattern`, compiled);
      return { pattern: rule.pattern, role: rule.role };
    });
    const now = this.clock.now();
    return this.tx.run(async () => {
      await this.audit.lockOrganization(org);
      const existing = await this.settings(org);
      const stored: StoredSsoConfig = {
        provider: dto.provider,
        requireMfaEvenWithSso: dto.requireMfaEvenWithSso ?? false,
        updatedAt: now.toISOString(),
        updatedBy: actor.userId,
      };
      let secretChanged = false;
      if (dto.provider === 'oidc') {
        if (!dto.oidc) throw invalid('oidc', 'oidc settings are required with provider oidc');
        const o = dto.oidc;
        const issuer = this.idpUrl(o.issuer, 'oidc.issuer');
        const previous = existing?.config.oidc;
        const sameClient = previous && previous.issuer === issuer && previous.clientId === o.clientId;
        if (o.clientSecret === undefined && !sameClient) {
          throw invalid('oidc.clientSecret', 'oidc.clientSecret is required for a new issuer or client id');
        }
        secretChanged = o.clientSecret !== undefined;
        stored.oidc = {
          issuer,
          clientId: o.clientId,
          clientSecretSealed:
            o.clientSecret !== undefined ? this.box.seal(o.clientSecret) : previous!.clientSecretSealed,
          scopes: [...new Set(['openid', ...(o.scopes ?? DEFAULT_SCOPES)])],
          groupsClaim: o.groupsClaim ?? 'groups',
        } satisfies StoredOidcSettings;
      } else {
        if (!dto.saml) throw invalid('saml', 'saml settings are required with provider saml');
        const s = dto.saml;
        stored.saml = {
          entryPoint: this.idpUrl(s.entryPoint, 'saml.entryPoint'),
          idpCertificate: certificatePem(s.idpCertificate).pem,
          idpIssuer: s.idpIssuer ?? null,
          groupsAttribute: s.groupsAttribute ?? 'groups',
          logoutUrl: s.logoutUrl !== undefined ? this.idpUrl(s.logoutUrl, 'saml.logoutUrl') : null,
        } satisfies StoredSamlSettings;
      }
      // The domains as written become the organization's claims; only those it has verified route
      // (docs/identity-administrators.md, "Proving a domain by DNS").
      await this.domainClaims.sync(org, dto.emailDomains);
      const previousTest = existing?.config.lastTest;
      if (previousTest?.fingerprint === this.fingerprint(stored)) stored.lastTest = previousTest;
      if (dto.enforceSso) {
        await this.assertEnforceable(org, stored);
        stored.enforceSso = true;
      }
      await this.organizations.setSsoFields(org, stored as unknown as Record<string, unknown>, rules, now);
      await this.audit.record(
        actor,
        'sso.config.update',
        { type: 'organization', id: org },
        {
          provider: stored.provider,
          emailDomains: dto.emailDomains,
          requireMfaEvenWithSso: stored.requireMfaEvenWithSso,
          enforceSso: stored.enforceSso === true,
          roleMappingRules: rules.length,
          secretChanged,
        },
        meta,
      );
      return this.view(
        org,
        { config: stored, emailDomains: await this.domains.list(org), roleMappingRules: rules },
        await this.domains.claims(org),
      );
    });
  }

  async remove(actor: Actor, meta: RequestMeta): Promise<SsoConfigDeletedDto> {
    const org = actor.organizationId;
    return this.tx.run(async () => {
      await this.audit.lockOrganization(org);
      const existing = await this.settings(org);
      if (!existing) throw AppError.notFound('SSO configuration');
      await this.domainClaims.dropAll(org);
      await this.organizations.setSsoFields(org, null, [], this.clock.now());
      await this.audit.record(
        actor,
        'sso.config.delete',
        { type: 'organization', id: org },
        { provider: existing.config.provider, emailDomains: existing.emailDomains },
        meta,
      );
      return { deleted: true as const };
    });
  }

  /**
   * Contacts the IdP: OIDC discovery, or the SAML certificate's validity and the URLs' addresses. The outcome is
   * kept with the settings it tested (`testPassedAt`), unless they changed meanwhile: `enforceSso` needs a pass.
   */
  async test(actor: Actor): Promise<SsoTestResultDto> {
    const org = actor.organizationId;
    const settings = await this.settings(org);
    if (!settings) throw AppError.notFound('SSO configuration');
    const checks =
      settings.config.provider === 'oidc' && settings.config.oidc
        ? await this.testOidc(settings.config.oidc)
        : await this.testSaml(settings.config.saml!);
    const ok = checks.every((c) => c.ok);
    const fingerprint = this.fingerprint(settings.config);
    await this.tx.run(async () => {
      await this.audit.lockOrganization(org);
      const current = await this.settings(org);
      if (!current || this.fingerprint(current.config) !== fingerprint) return;
      const stored: StoredSsoConfig = {
        ...current.config,
        lastTest: { fingerprint, passedAt: ok ? this.clock.now().toISOString() : null },
      };
      await this.organizations.setSsoFields(
        org,
        stored as unknown as Record<string, unknown>,
        current.roleMappingRules,
        this.clock.now(),
      );
    });
    return { ok, checks };
  }

  private fingerprint(config: StoredSsoConfig): string {
    return idpFingerprint(config, (sealed) => {
      try {
        return this.box.open(sealed);
      } catch {
        return sealed; // unreadable (another key): it then matches no test, and enforcing needs a new one
      }
    });
  }

  /**
   * `enforceSso` locks every user of the verified domains out of every other way in, so it is refused unless the
   * organization holds a verified domain and the IdP settings being saved are the ones whose last test passed.
   */
  private async assertEnforceable(organizationId: string, stored: StoredSsoConfig): Promise<void> {
    if ((await this.domains.list(organizationId)).length === 0) {
      throw invalid(
        'enforceSso',
        'enforceSso needs a verified domain: publish its TXT record and call POST /sso/domains/:domain/verify first',
      );
    }
    if (!stored.lastTest?.passedAt) {
      throw invalid(
        'enforceSso',
        'enforceSso needs these IdP settings to pass POST /sso/config/test first: save them without enforceSso, ' +
          'run the test, then turn it on',
      );
    }
  }

  private async testOidc(o: StoredOidcSettings): Promise<SsoCheckDto[]> {
    const checks: SsoCheckDto[] = [];
    const reachable = await this.addressCheck('issuer_address', o.issuer);
    checks.push(reachable);
    if (!reachable.ok) return checks;
    let metadata: oidc.ServerMetadata;
    try {
      const configuration = await this.network.discover(
        new URL(o.issuer),
        o.clientId,
        this.box.open(o.clientSecretSealed),
      );
      metadata = configuration.serverMetadata();
      checks.push({ name: 'discovery', ok: true, detail: `issuer ${metadata.issuer}` });
      try {
        await checkEndpoints(metadata, this.config.ssoAllowPrivateNetworks, this.network.resolver);
        checks.push({
          name: 'endpoints_address',
          ok: true,
          detail: 'every endpoint resolves to an allowed address',
        });
      } catch (err) {
        checks.push({ name: 'endpoints_address', ok: false, detail: reason(err) });
        return checks;
      }
    } catch (err) {
      // A refusal at connection time (the name answered another address by then) shows as the guard's refusal.
      checks.push({ name: 'discovery', ok: false, detail: reason(ssrfRefusalIn(err) ?? err) });
      return checks;
    }
    const codes = metadata.response_types_supported ?? [];
    checks.push({
      name: 'authorization_code',
      ok: codes.includes('code'),
      detail: codes.includes('code') ? 'response type code supported' : 'response type code not advertised',
    });
    const pkce = metadata.code_challenge_methods_supported;
    checks.push({
      name: 'pkce_s256',
      ok: pkce === undefined || pkce.includes('S256'),
      detail:
        pkce === undefined
          ? 'not advertised; S256 is sent, as most providers accept it'
          : pkce.includes('S256')
            ? 'S256 supported'
            : `S256 not among ${pkce.join(', ')}`,
    });
    checks.push({
      name: 'jwks',
      ok: typeof metadata.jwks_uri === 'string',
      detail: metadata.jwks_uri ? 'jwks_uri present' : 'no jwks_uri: ID tokens could not be verified',
    });
    return checks;
  }

  private async testSaml(s: StoredSamlSettings): Promise<SsoCheckDto[]> {
    const checks: SsoCheckDto[] = [];
    const { cert } = certificatePem(s.idpCertificate);
    const view = certificateView(cert);
    const now = this.clock.nowMs();
    const from = Date.parse(view.validFrom);
    const to = Date.parse(view.validTo);
    checks.push({ name: 'certificate', ok: true, detail: view.subject });
    checks.push({
      name: 'certificate_validity',
      ok: from <= now && now < to,
      detail:
        now < from
          ? `not valid before ${view.validFrom}`
          : now >= to
            ? `expired at ${view.validTo}`
            : `valid until ${view.validTo} (${Math.floor((to - now) / DAY_MS)} days)`,
    });
    checks.push(await this.addressCheck('entry_point_address', s.entryPoint));
    if (s.logoutUrl) checks.push(await this.addressCheck('logout_url_address', s.logoutUrl));
    return checks;
  }

  /**
   * Whether the URL's host resolves (through SSO_DNS_SERVERS when set) to addresses the SSRF guard allows
   * (SSO_ALLOW_PRIVATE_NETWORKS aside). The detail names the host, never the address it resolved to.
   */
  private async addressCheck(name: string, url: string): Promise<SsoCheckDto> {
    const host = new URL(url).hostname;
    try {
      await resolveTarget(new URL(url), this.config.ssoAllowPrivateNetworks, this.network.resolver);
      return { name, ok: true, detail: `${host} resolves to an allowed address` };
    } catch (err) {
      const refusal = ssrfRefusalIn(err);
      if (refusal) return { name, ok: false, detail: reason(refusal) };
      return { name, ok: false, detail: `${host} does not resolve` };
    }
  }

  /** An IdP URL: absolute https (http only with SSO_ALLOW_INSECURE_HTTP), no credentials, no fragment, no spaces. */
  private idpUrl(raw: string, field: string): string {
    let url: URL;
    try {
      if (/\s/.test(raw)) throw new Error('white space');
      url = new URL(raw);
    } catch {
      throw invalid(field, `${field} must be an absolute https URL`);
    }
    const insecure = this.config.ssoAllowInsecureHttp && url.protocol === 'http:';
    if (url.protocol !== 'https:' && !insecure) {
      throw invalid(
        field,
        this.config.ssoAllowInsecureHttp
          ? `${field} must be an absolute http or https URL`
          : `${field} must be an https URL`,
      );
    }
    if (url.username || url.password) throw invalid(field, `${field} must not carry credentials`);
    if (url.hash) throw invalid(field, `${field} must not have a fragment`);
    // Kept as written: an OIDC issuer must equal the IdP's own, trailing slash included.
    return raw;
  }

  /** `claims`: the organization's domain claims, which `emailDomains` lists as written and `domains` with states. */
  private view(organizationId: string, s: SsoSettings, claims: readonly SsoDomainClaimRow[]): SsoConfigDto {
    const api = `${this.config.publicUrl}/api/v1`;
    const o = s.config.oidc;
    const saml = s.config.saml;
    return {
      provider: s.config.provider,
      emailDomains: claims.map((c) => c.domain),
      domains: claims.map((c) => ({ domain: c.domain, status: c.status })),
      requireMfaEvenWithSso: s.config.requireMfaEvenWithSso,
      enforceSso: s.config.enforceSso === true,
      testPassedAt:
        s.config.lastTest?.fingerprint === this.fingerprint(s.config) ? s.config.lastTest.passedAt : null,
      roleMappingRules: s.roleMappingRules,
      ...(s.config.provider === 'oidc' && o
        ? {
            oidc: {
              issuer: o.issuer,
              clientId: o.clientId,
              clientSecretSet: o.clientSecretSealed.length > 0,
              scopes: o.scopes,
              groupsClaim: o.groupsClaim,
              redirectUri: `${api}/auth/sso/callback`,
            },
          }
        : {}),
      ...(s.config.provider === 'saml' && saml
        ? {
            saml: {
              entryPoint: saml.entryPoint,
              idpCertificate: certificateView(certificatePem(saml.idpCertificate).cert),
              idpIssuer: saml.idpIssuer,
              groupsAttribute: saml.groupsAttribute,
              logoutUrl: saml.logoutUrl,
              spEntityId: `${api}/auth/saml/metadata/${organizationId}`,
              acsUrl: `${api}/auth/saml/callback`,
              metadataUrl: `${api}/auth/saml/metadata/${organizationId}`,
              sloUrl: `${api}/auth/saml/logout/callback`,
            },
          }
        : {}),
      updatedAt: s.config.updatedAt,
      updatedBy: s.config.updatedBy,
    };
  }
}
