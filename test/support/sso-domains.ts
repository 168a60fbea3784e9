import { expect } from 'vitest';
import type { TestContext } from './app.js';
import type { TestDns } from './test-dns.js';

export const SSO_DOMAINS = '/api/v1/sso/domains';

export interface SsoDomainView {
  domain: string;
  status: 'pending' | 'verified' | 'failing';
  record: { type: 'TXT'; name: string; value: string };
  verifiedAt: string | null;
  lastCheckedAt: string | null;
}

/**
 * Proves the organization's claimed domains (all, or those named) as an owner would: publishes each claim's TXT
 * record on the test's DNS server and verifies it. The context must resolve through that server (`ssoDnsServers`).
 */
export async function verifySsoDomains(
  ctx: TestContext,
  ownerToken: string,
  dns: TestDns,
  only?: readonly string[],
): Promise<SsoDomainView[]> {
  const listed = await ctx.get(SSO_DOMAINS, { token: ownerToken });
  expect(listed.statusCode, listed.body).toBe(200);
  const verified: SsoDomainView[] = [];
  for (const claim of listed.json().data as SsoDomainView[]) {
    if (only && !only.includes(claim.domain)) continue;
    dns.setTxt(claim.record.name, claim.record.value);
    const res = await ctx.post(`${SSO_DOMAINS}/${claim.domain}/verify`, { token: ownerToken });
    expect(res.statusCode, res.body).toBe(200);
    verified.push(res.json().data as SsoDomainView);
  }
  return verified;
}
