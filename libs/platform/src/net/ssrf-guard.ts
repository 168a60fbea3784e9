import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { DnsResolver } from './dns-resolver.js';

/**
 * Addresses an outbound request to a URL a customer gave (webhooks, integrations, SSO identity providers) may not
 * reach unless private networks are allowed: loopback, private, shared, link-local (cloud metadata), unspecified,
 * documentation, benchmarking, multicast and reserved ranges, in both families.
 */
const BLOCKED_V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED_V4.addSubnet(net, prefix, 'ipv4');
}

/**
 * IPv6 ranges refused whole. Every form that carries an IPv4 address inside it and is not checked by that address
 * (below) is here, whatever the IPv4 address: a host cannot be judged by an address that is only a tunnel's end
 * point or a translator's input.
 */
const BLOCKED_V6: ReadonlyArray<readonly [string, number]> = [
  // IPv4-compatible (deprecated), with the unspecified address and loopback in it.
  ['::', 96],
  ['100::', 64], // discard-only
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation (RFC 8215): a translator into private networks
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32, an IPv4 server and client inside), ORCHID, benchmarking
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: an IPv4 relay inside
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // segment routing (SRv6) SIDs
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const BLOCKED_V6_BITS = BLOCKED_V6.map(([net, prefix]) => {
  const bits = ipv6Bits(net)!;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
  return { net: bits & mask, mask };
});

/** An IPv6 address (optionally with a zone, or an IPv4 tail) as a 128-bit number; null when it is not one. */
function ipv6Bits(address: string): bigint | null {
  const bare = address.replace(/%.*$/, '');
  if (isIP(bare) !== 6) return null;
  let text = bare.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const groups = [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function ipv4Of(bits: bigint): string {
  const v = Number(bits & 0xffffffffn);
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the forms that reach that IPv4 host itself:
 * IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`) and the well-known NAT64 prefix
 * (`64:ff9b::a.b.c.d`). Those are judged by the IPv4 address.
 */
function translatedIpv4(bits: bigint): string | null {
  const high = bits >> 32n;
  if (high === 0xffffn || high === 0xffff0000n || high === 0x64ff9b0000000000000000n) return ipv4Of(bits);
  return null;
}

/** Whether an IP address is one an outbound request to a customer's URL may not reach. Not an address: blocked. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED_V4.check(address, 'ipv4');
  const bits = family === 6 ? ipv6Bits(address) : null;
  if (bits === null) return true;
  const v4 = translatedIpv4(bits);
  if (v4 !== null) return BLOCKED_V4.check(v4, 'ipv4');
  return BLOCKED_V6_BITS.some((range) => (bits & range.mask) === range.net);
}

const refusalObservers = new Set<() => void>();

/**
 * Calls `observer` at each refusal (the refusal count); returns what stops it. The guard is a set of functions with
 * no application of its own, so an observer hears every refusal of the process (one application per process in
 * production; tests that start several see each other's).
 */
export function observeSsrfRefusals(observer: () => void): () => void {
  refusalObservers.add(observer);
  return () => void refusalObservers.delete(observer);
}

/**
 * A refused target. Its message names the host as the caller wrote it, never the address it resolved to: an
 * answer that told which private address a name points at would map the private network for the caller. Each one
 * made is one refusal (a wrapped one is found again with `ssrfRefusalIn`, not made anew).
 */
export class SsrfRefusal extends Error {
  constructor(message: string) {
    super(message);
    for (const observer of refusalObservers) observer();
  }
}

/** The SsrfRefusal behind an error (fetch wraps a connection's errors in its own), if there is one. */
export function ssrfRefusalIn(err: unknown): SsrfRefusal | undefined {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof SsrfRefusal) return e;
  }
  return undefined;
}

/** A name that has not resolved by then is treated as not resolving. */
export const DNS_TIMEOUT_MS = 3000;

function lookupAll(host: string): Promise<ResolvedTarget[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${host} did not resolve within ${DNS_TIMEOUT_MS} ms`)),
      DNS_TIMEOUT_MS,
    );
  });
  return Promise.race([
    lookup(host, { all: true, verbatim: true }) as Promise<ResolvedTarget[]>,
    timeout,
  ]).finally(() => clearTimeout(timer));
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

/** A URL's host without the brackets of an IPv6 literal. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Every address of a host, each checked: a host with one refused address among allowed ones is refused, or the
 * connection could pick it. Through `resolver` when given (SSO_DNS_SERVERS), the system resolver otherwise.
 * Throws `SsrfRefusal` for a refused address, and the resolver's error for a name that does not resolve.
 */
export async function checkedAddresses(
  host: string,
  allowPrivate: boolean,
  resolver?: DnsResolver,
): Promise<ResolvedTarget[]> {
  const literal = isIP(host);
  const addresses = literal
    ? [{ address: host, family: literal as 4 | 6 }]
    : resolver
      ? await resolver.addresses(host)
      : await lookupAll(host);
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  if (!allowPrivate && addresses.some((a) => isBlockedAddress(a.address))) {
    throw new SsrfRefusal(
      literal
        ? `${host} is a loopback, private, link-local or reserved address`
        : `${host} resolves to a loopback, private, link-local or reserved address`,
    );
  }
  return addresses;
}

/**
 * Resolves a URL's host and checks every address it resolves to. Returns the address to connect to, so that the
 * connection cannot be sent elsewhere by a second resolution (DNS rebinding). Throws `SsrfRefusal` for a refused
 * address, and the resolver's error for a name that does not resolve.
 */
export async function resolveTarget(
  url: URL,
  allowPrivate: boolean,
  resolver?: DnsResolver,
): Promise<ResolvedTarget> {
  return (await checkedAddresses(bareHost(url), allowPrivate, resolver))[0]!;
}
