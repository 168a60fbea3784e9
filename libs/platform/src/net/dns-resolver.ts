import { lookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';

/** A name that has not resolved by then is treated as not resolving. */
export const DNS_LOOKUP_TIMEOUT_MS = 3000;

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * The resolver for names customers give (identity providers, webhook targets, the TXT records that prove an SSO
 * domain): the system's, or the servers of `SSO_DNS_SERVERS` (`host:port`, comma-separated) when set, so that a
 * deployment can name its own and tests can run a DNS server of their own.
 */
export class DnsResolver {
  private readonly resolver: Resolver | null;

  constructor(servers: readonly string[] | null) {
    if (servers && servers.length > 0) {
      this.resolver = new Resolver({ timeout: DNS_LOOKUP_TIMEOUT_MS, tries: 1 });
      this.resolver.setServers([...servers]);
    } else {
      this.resolver = null;
    }
  }

  /** Every address of a host (A and AAAA), or the literal address itself. */
  async addresses(host: string): Promise<ResolvedAddress[]> {
    const literal = isIP(host);
    if (literal) return [{ address: host, family: literal as 4 | 6 }];
    return withTimeout(host, async () => {
      if (!this.resolver) return (await lookup(host, { all: true, verbatim: true })) as ResolvedAddress[];
      const [v4, v6] = await Promise.all([
        this.resolver.resolve4(host).catch(() => [] as string[]),
        this.resolver.resolve6(host).catch(() => [] as string[]),
      ]);
      return [
        ...v4.map((address) => ({ address, family: 4 as const })),
        ...v6.map((address) => ({ address, family: 6 as const })),
      ];
    });
  }

  /** The TXT records at a name, each joined from its strings; none (an empty list) when the name has none. */
  async txt(name: string): Promise<string[]> {
    return withTimeout(name, async () => {
      try {
        const records = this.resolver
          ? await this.resolver.resolveTxt(name)
          : await new Resolver().resolveTxt(name);
        return records.map((chunks) => chunks.join(''));
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'ENOTFOUND' || code === 'ENODATA') return [];
        throw err;
      }
    });
  }
}

function withTimeout<T>(name: string, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${name} did not resolve within ${DNS_LOOKUP_TIMEOUT_MS} ms`)),
      DNS_LOOKUP_TIMEOUT_MS,
    );
  });
  return Promise.race([work(), timeout]).finally(() => clearTimeout(timer));
}
