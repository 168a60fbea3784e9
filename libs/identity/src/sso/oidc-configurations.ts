import { Inject, Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import { APP_CONFIG, type AppConfig, resolveTarget, SecretBox } from '#platform';
import type { StoredOidcSettings } from './sso-config.types.js';

/** Discovered IdPs kept at most, and for how long. */
const CACHE_MAX = 200;
const CACHE_TTL_MS = 10 * 60_000;
const DISCOVERY_TIMEOUT_S = 10;

/**
 * The openid-client configurations of organizations' IdPs, from discovery, cached per organization and settings
 * (a bounded LRU with a TTL: a changed configuration is a new key). The issuer's address passes the SSRF guard first.
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
    this.cache.set(key, { configuration, until: Date.now() + CACHE_TTL_MS });
    while (this.cache.size > CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    return configuration;
  }
}
