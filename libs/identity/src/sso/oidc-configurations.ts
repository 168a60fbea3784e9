import { Inject, Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import { APP_CONFIG, type AppConfig, resolveTarget, SecretBox } from '#platform';
import type { StoredOidcSettings } from './sso-config.types.js';

/** Discovered IdPs kept at most, and for how long. */
const CACHE_MAX = 200;
const CACHE_TTL_MS = 10 * 60_000;
const DISCOVERY_TIMEOUT_S = 10;

/** The endpoints a discovery document names, which the service will call or send the browser to. */
const ENDPOINTS = ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'] as const;

/**
 * Passes every endpoint of a discovery document through the SSRF guard: a document may name any host, and the token
 * endpoint receives the client secret. Throws SsrfRefusal (or a lookup error) for the first one refused.
 */
export async function checkEndpoints(metadata: oidc.ServerMetadata, allowPrivate: boolean): Promise<void> {
  for (const name of ENDPOINTS) {
    const endpoint = metadata[name];
    if (typeof endpoint === 'string') await resolveTarget(new URL(endpoint), allowPrivate);
  }
}

/**
 * The openid-client configurations of organizations' IdPs, from discovery, cached per organization and settings
 * (a bounded LRU with a TTL: a changed configuration is a new key). The issuer's address passes the SSRF guard
 * first, and every endpoint the discovery document names after it. (The guard checks addresses when the
 * configuration is made; openid-client resolves names again for each request, so a name that changes its address in
 * between, DNS rebinding, is not caught: pinning the connection is a next step.)
 */
@Injectable()
export class OidcConfigurations {
  private readonly cache = new Map<string, { configuration: oidc.Configuration; until: number }>();

  constructor(
    private readonly box: SecretBox,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'ssoAllowInsecureHttp' | 'ssoAllowPrivateNetworks'>,
  ) {}

  async get(
    organizationId: string,
    settings: StoredOidcSettings,
    version: string,
  ): Promise<oidc.Configuration> {
    const key = `${organizationId}|${version}|${settings.issuer}|${settings.clientId}`;
    const hit = this.cache.get(key);
    if (hit && hit.until > Date.now()) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.configuration;
    }
    const issuer = new URL(settings.issuer);
    await resolveTarget(issuer, this.config.ssoAllowPrivateNetworks);
    const configuration = await oidc.discovery(
      issuer,
      settings.clientId,
      this.box.open(settings.clientSecretSealed),
      undefined,
      {
        execute: this.config.ssoAllowInsecureHttp ? [oidc.allowInsecureRequests] : [],
        timeout: DISCOVERY_TIMEOUT_S,
      },
    );
    await checkEndpoints(configuration.serverMetadata(), this.config.ssoAllowPrivateNetworks);
    this.cache.set(key, { configuration, until: Date.now() + CACHE_TTL_MS });
    while (this.cache.size > CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    return configuration;
  }
}
