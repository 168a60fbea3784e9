import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import type { DnsResolver } from './dns-resolver.js';
import { bareHost, checkedAddresses, isBlockedAddress, SsrfRefusal, ssrfRefusalIn } from './ssrf-guard.js';

/** A Fetch API function (the shape openid-client's `customFetch` takes). */
export type PinnedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface PinnedFetchOptions {
  /** Resolves every name: the servers of SSO_DNS_SERVERS when set, the system's otherwise. */
  resolver: DnsResolver;
  /** Loopback, private, link-local and reserved addresses allowed (SSO_ALLOW_PRIVATE_NETWORKS); read per request. */
  allowPrivate: boolean | (() => boolean);
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

function wantedFamily(options: LookupOptions): 4 | 6 | undefined {
  const family = options.family as number | string | undefined;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return undefined;
}

/**
 * A fetch whose connections go to the addresses the SSRF guard checked. Its undici `Agent` opens each connection
 * with a `lookup` of its own: the name is resolved once, through `resolver`, every address is checked, and the
 * checked addresses are what the socket connects to. Nothing resolves the name again between the check and the
 * connection, so a name that answers a public address to the check and a private one next (DNS rebinding) never
 * reaches the private one. An IP literal, which sockets do not look up, is checked before the request. A refusal
 * rejects with the `SsrfRefusal` itself (not fetch's "fetch failed"), whose message does not name the address.
 *
 * Connections are kept alive per origin; each was opened to a checked address. Redirects are never followed here
 * (`redirect: "manual"` unless the caller asked for `"error"`): a socket skips the lookup for an IP literal, so a
 * redirect to one would pass unchecked; a caller that follows a redirect calls this fetch again, which checks it.
 */
export function pinnedFetch(options: PinnedFetchOptions): PinnedFetch {
  const allowPrivate = () =>
    typeof options.allowPrivate === 'function' ? options.allowPrivate() : options.allowPrivate;
  const lookup = ((hostname: string, lookupOptions: LookupOptions, callback: LookupCallback) => {
    checkedAddresses(hostname, allowPrivate(), options.resolver).then(
      (addresses) => {
        const family = wantedFamily(lookupOptions);
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        if (usable.length === 0) {
          const none: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${family} address`);
          none.code = 'ENOTFOUND';
          callback(none, '');
        } else if (lookupOptions.all) {
          callback(null, usable);
        } else {
          callback(null, usable[0]!.address, usable[0]!.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  }) as LookupFunction;
  const agent = new Agent({ connect: { lookup } });

  return async (url, init) => {
    const target = new URL(url);
    if (target.protocol !== 'https:' && target.protocol !== 'http:') {
      throw new TypeError(`only http and https URLs may be fetched, not ${target.protocol}`);
    }
    const host = bareHost(target);
    if (isIP(host) && !allowPrivate() && isBlockedAddress(host)) {
      throw new SsrfRefusal(`${host} is a loopback, private, link-local or reserved address`);
    }
    try {
      const redirect = init?.redirect === 'error' ? 'error' : 'manual';
      const response = await undiciFetch(target, {
        ...(init as UndiciRequestInit),
        redirect,
        dispatcher: agent,
      });
      return response as unknown as Response;
    } catch (err) {
      throw ssrfRefusalIn(err) ?? err;
    }
  };
}
