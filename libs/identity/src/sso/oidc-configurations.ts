import { Inject, Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import {
  APP_CONFIG,
  type AppConfig,
  DnsResolver,
  pinnedFetch,
  type PinnedFetch,
  resolveTarget,
  SecretBox,
} from '#platform';
import type { StoredOidcSettings } from './sso-config.types.js';

/** Discovered IdPs kept at most, and for how long. */
const CACHE_MAX = 200;
const CACHE_TTL_MS = 10 * 60_000;
const DISCOVERY_TIMEOUT_S = 10;

/** The endpoints a discovery document names, which the service will call or send the browser to. */
const ENDPOINTS = ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'] as const;

type IdpNetworkConfig = Pick<AppConfig, 'ssoAllowInsecureHttp' | 'ssoAllowPrivateNetworks' | 'ssoDnsServers'>;

/**
 * Passes every endpoint of a discovery document through the SSRF guard: a document may name any host, and the token
 * endpoint receives the client secret. Throws SsrfRefusal (or a lookup error) for the first one refused. (The calls
 * themselves are checked again as they connect, by the pinned fetch; this refuses a bad document up front.)
 */
export async function checkEndpoints(
  metadata: oidc.ServerMetadata,
  allowPrivate: boolean,
  resolver?: DnsResolver,
): Promise<void> {
  for (const name of ENDPOINTS) {
    const endpoint = metadata[name];
    if (typeof endpoint === 'string') await resolveTarget(new URL(endpoint), allowPrivate, resolver);
  }
}

/**
 * How the service reaches identity providers: names resolved through SSO_DNS_SERVERS (or the system resolver),
 * and a fetch pinned to the addresses the SSRF guard checked, for openid-client's `customFetch` (discovery, token,
 * userinfo and JWKS requests all go through it).
 */
export class IdpNetwork {
  readonly resolver: DnsResolver;
  readonly fetch: PinnedFetch;

  constructor(private readonly config: IdpNetworkConfig) {
    this.resolver = new DnsResolver(config.ssoDnsServers);
    this.fetch = pinnedFetch({ resolver: this.resolver, allowPrivate: () => config.ssoAllowPrivateNetworks });
  }

  /** OIDC discovery of an issuer, the resulting configuration's later requests on the same pinned fetch. */
  discover(issuer: URL, clientId: string, clientSecret: string): Promise<oidc.Configuration> {
    return oidc.discovery(issuer, clientId, clientSecret, undefined, {
      [oidc.customFetch]: this.fetch as oidc.CustomFetch,
      execute: this.config.ssoAllowInsecureHttp ? [oidc.allowInsecureRequests] : [],
      timeout: DISCOVERY_TIMEOUT_S,
    });
  }
}

/**
 * The openid-client configurations of organizations' IdPs, from discovery, cached per organization and settings
 * (a bounded LRU with a TTL: a changed configuration is a new key). The issuer's address passes the SSRF guard
 * first, and every endpoint the discovery document names after it. Every request (discovery, token, userinfo,
 * JWKS) goes through the pinned fetch: its connection goes to the address checked as it connects, so a name that
 * changes its address after the check (DNS rebinding) cannot send it to a private address.
 */
@Injectable()
export class OidcConfigurations {
  private readonly cache = new Map<string, { configuration: oidc.Configuration; until: number }>();
  private readonly network: IdpNetwork;

  constructor(
    private readonly box: SecretBox,
    @Inject(APP_CONFIG)
    private readonly config: IdpNetworkConfig,
  ) {
    this.network = new IdpNetwork(config);
  }

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
    const allowPrivate = this.config.ssoAllowPrivateNetworks;
    await resolveTarget(issuer, allowPrivate, this.network.resolver);
    const configuration = await this.network.discover(
      issuer,
      settings.clientId,
      this.box.open(settings.clientSecretSealed),
    );
    await checkEndpoints(configuration.serverMetadata(), allowPrivate, this.network.resolver);
    this.cache.set(key, { configuration, until: Date.now() + CACHE_TTL_MS });
    while (this.cache.size > CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    return configuration;
  }
}
