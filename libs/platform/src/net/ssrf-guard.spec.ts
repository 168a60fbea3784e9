import { describe, expect, it } from 'vitest';
import type { DnsResolver } from './dns-resolver.js';
import {
  checkedAddresses,
  isBlockedAddress,
  resolveTarget,
  SsrfRefusal,
  ssrfRefusalIn,
} from './ssrf-guard.js';

/** A resolver that answers from a table, the way DnsResolver answers from SSO_DNS_SERVERS. */
function resolverOf(table: Record<string, string[]>): DnsResolver {
  return {
    addresses: async (host: string) =>
      (table[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  } as unknown as DnsResolver;
}

describe('isBlockedAddress', () => {
  it.each([
    ['127.0.0.1'],
    ['10.1.2.3'],
    ['172.16.0.1'],
    ['192.168.1.1'],
    ['169.254.169.254'],
    ['100.64.0.1'],
    ['0.0.0.0'],
    ['224.0.0.1'],
    ['255.255.255.255'],
    ['::'],
    ['::1'],
    ['fe80::1'],
    ['fe80::1%eth0'],
    ['fd00::1'],
    ['ff02::1'],
    ['2001:db8::1'],
  ])('refuses %s (loopback, private, link-local, reserved)', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each([
    // IPv4-mapped and IPv4-translated: judged by the IPv4 address inside.
    ['::ffff:127.0.0.1'],
    ['::ffff:7f00:1'],
    ['0:0:0:0:0:ffff:a00:1'],
    ['::ffff:0:127.0.0.1'],
    ['::ffff:0:a9fe:a9fe'],
    // NAT64, well-known prefix: judged by the IPv4 address inside.
    ['64:ff9b::127.0.0.1'],
    ['64:ff9b::a9fe:a9fe'],
  ])('refuses %s, an IPv6 form of a private IPv4 address', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each([
    // IPv4-compatible (::/96), even with a public IPv4 address inside.
    ['::127.0.0.1', '::/96'],
    ['::7f00:1', '::/96'],
    ['::8.8.8.8', '::/96'],
    ['::a9fe:a9fe', '::/96'],
    // 6to4: the relay's IPv4 address inside.
    ['2002:7f00:1::', '2002::/16'],
    ['2002:a9fe:a9fe::1', '2002::/16'],
    ['2002:808:808::1', '2002::/16'],
    // Teredo: server and (obfuscated) client IPv4 addresses inside.
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32'],
    ['2001::7f00:1', '2001::/32'],
    // Local-use NAT64 (RFC 8215): a translator into private networks.
    ['64:ff9b:1::a00:1', '64:ff9b:1::/48'],
    ['64:ff9b:1::808:808', '64:ff9b:1::/48'],
    ['64:ff9b:1:ffff::1.2.3.4', '64:ff9b:1::/48'],
  ])('refuses %s, an IPv6 form that embeds an IPv4 address (%s)', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['2606:4700::1111'],
    ['2a00:1450:4001::200e'],
    ['::ffff:8.8.8.8'],
    ['64:ff9b::808:808'],
  ])('allows the public address %s', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it('refuses what is not an address', () => {
    expect(isBlockedAddress('example.com')).toBe(true);
    expect(isBlockedAddress('')).toBe(true);
  });
});

describe('checkedAddresses and resolveTarget', () => {
  it('resolves through the resolver it is given, and returns every checked address', async () => {
    const resolver = resolverOf({ 'idp.example': ['93.184.216.34', '2606:2800:220:1::1'] });
    expect(await checkedAddresses('idp.example', false, resolver)).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    expect(await resolveTarget(new URL('https://idp.example/x'), false, resolver)).toEqual({
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('refuses a name with one private address among public ones, without naming the address', async () => {
    const resolver = resolverOf({ 'mixed.example': ['93.184.216.34', '10.11.12.13'] });
    const err = await checkedAddresses('mixed.example', false, resolver).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SsrfRefusal);
    expect((err as Error).message).toBe(
      'mixed.example resolves to a loopback, private, link-local or reserved address',
    );
    expect((err as Error).message).not.toContain('10.11.12.13');
    expect(await checkedAddresses('mixed.example', true, resolver)).toHaveLength(2);
  });

  it('refuses IPv6 literals with an IPv4 address inside, in brackets as URLs write them', async () => {
    for (const host of ['[::7f00:1]', '[2002:7f00:1::1]', '[2001::7f00:1]', '[64:ff9b:1::a00:1]']) {
      const err = await resolveTarget(new URL(`http://${host}/`), false).catch((e: unknown) => e);
      expect(err, host).toBeInstanceOf(SsrfRefusal);
    }
  });

  it('fails a name that does not resolve with an error that is not a refusal', async () => {
    const err = await checkedAddresses('nowhere.example', false, resolverOf({})).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(SsrfRefusal);
  });
});

describe('ssrfRefusalIn', () => {
  it('finds a refusal wrapped in causes, as fetch wraps a connection error', () => {
    const refusal = new SsrfRefusal('x');
    const wrapped = new TypeError('fetch failed', { cause: new Error('connect', { cause: refusal }) });
    expect(ssrfRefusalIn(wrapped)).toBe(refusal);
    expect(ssrfRefusalIn(new TypeError('fetch failed'))).toBeUndefined();
    expect(ssrfRefusalIn(undefined)).toBeUndefined();
  });
});
